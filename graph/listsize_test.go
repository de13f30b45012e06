package graph_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"entgo.io/contrib/entgql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/scalar"
	"github.com/propertyrecords/inventory/internal/testdb"
)

type typeRef struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	OfType *typeRef `json:"ofType"`
}

func (t *typeRef) named() *typeRef {
	for t.OfType != nil {
		t = t.OfType
	}
	return t
}

func (t *typeRef) isList() bool {
	for ; t != nil; t = t.OfType {
		if t.Kind == "LIST" {
			return true
		}
	}
	return false
}

type introspected struct {
	Schema struct {
		Types []struct {
			Name   string `json:"name"`
			Kind   string `json:"kind"`
			Fields []struct {
				Name string `json:"name"`
				Args []struct {
					Name         string  `json:"name"`
					DefaultValue *string `json:"defaultValue"`
					Type         typeRef `json:"type"`
				} `json:"args"`
				Type typeRef `json:"type"`
			} `json:"fields"`
		} `json:"types"`
	} `json:"__schema"`
}

const introspectLists = `{ __schema { types { name kind fields { name
	args { name defaultValue type { kind name ofType { kind name ofType { kind name } } } }
	type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`

// holdsList tells a field whose type is a page of a list (a connection or a
// numbered page): it is priced as a list, and the list inside it is sized by it.
func holdsList(t *typeRef) bool {
	name := t.named().Name
	return strings.HasSuffix(name, "Connection") || strings.HasSuffix(name, "Page")
}

// TestEveryListIsBounded walks the introspected schema. Every field that
// returns a list, or a connection or page of one, must carry a @listSize
// bound whose size argument the client sees, with a default (or required),
// or else be the list inside such a field (a connection's edges). Each bound
// is then asked for one more than its maximum, which must be refused.
func TestEveryListIsBounded(t *testing.T) {
	srv, _ := demo(t)
	var got introspected
	srv.MustData(t, "", introspectLists, nil, &got)
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()

	// sizedBy[T] lists the sizedFields of every @listSize field returning T.
	sizedBy := map[string][][]string{}
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			if d := f.Directives.ForName("listSize"); d != nil {
				sizedBy[f.Type.Name()] = append(sizedBy[f.Type.Name()], argStrings(d, "sizedFields"))
			}
		}
	}
	ids := idsByType(t, srv)
	checked := 0
	for _, typ := range got.Schema.Types {
		if typ.Kind != "OBJECT" || strings.HasPrefix(typ.Name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			if !f.Type.isList() && !holdsList(&f.Type) {
				continue
			}
			name := typ.Name + "." + f.Name
			d := schema.Types[typ.Name].Fields.ForName(f.Name).Directives.ForName("listSize")
			if d == nil {
				if holders := sizedBy[typ.Name]; len(holders) == 0 || !slices.ContainsFunc(holders, func(sized []string) bool { return slices.Contains(sized, f.Name) }) {
					t.Errorf("%s is a list without a bound: give it a @listSize (an ent ListSize annotation for an edge)", name)
				}
				continue
			}
			slicing := argStrings(d, "slicingArguments")
			maxSize, _ := strconv.Atoi(d.Arguments.ForName("max").Value.Raw)
			if len(slicing) == 0 {
				// Returned whole (a comparison's lists): bounded by what an
				// inventory may hold, and priced at that bound.
				if priced := d.Arguments.ForName("priceAt"); maxSize <= 0 || priced == nil || priced.Value.Raw != strconv.Itoa(maxSize) {
					t.Errorf("%s: a list returned whole needs a positive max and priceAt equal to it", name)
				}
				checked++
				continue
			}
			hasDefault := d.Arguments.ForName("default") != nil
			for _, arg := range f.Args {
				if slices.Contains(slicing, arg.Name) && (arg.DefaultValue != nil || arg.Type.Kind == "NON_NULL") {
					hasDefault = true
				}
			}
			if !hasDefault || maxSize <= 0 {
				t.Errorf("%s: its size argument %v has no default and is not required, or max %d is not positive", name, slicing, maxSize)
				continue
			}
			nonNull := false
			// A required ID beside the size (webhookDeliveries' endpointId)
			// is given one that names nothing: the bound holds all the same.
			var required []string
			for _, arg := range f.Args {
				switch {
				case arg.Name == slicing[0]:
					nonNull = arg.Type.Kind == "NON_NULL"
				case arg.Type.Kind == "NON_NULL" && arg.DefaultValue == nil && arg.Type.named().Name == "ID":
					required = append(required, fmt.Sprintf("%s: %q", arg.Name, uuid.NewString()))
				}
			}
			refusesOverMax(t, srv, typ.Name, f.Name, slicing[0], maxSize, nonNull, ids, required...)
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("checked %d bounded lists, want every one of the schema's (at least 10)", checked)
	}
}

func argStrings(d *ast.Directive, name string) []string {
	var out []string
	if a := d.Arguments.ForName(name); a != nil {
		for _, c := range a.Value.Children {
			out = append(out, c.Value.Raw)
		}
	}
	return out
}

// refusesOverMax asks typ.field for max+1 elements through arg, reaching an
// object of typ by node(id:), and wants INVALID_ARGUMENT naming arg.
func refusesOverMax(t *testing.T, srv *apitest.Server, typ, field, arg string, maxSize int, nonNull bool, ids map[string]string, required ...string) {
	t.Helper()
	value := strconv.Itoa(maxSize + 1)
	if arg == "ids" {
		quoted := make([]string, maxSize+1)
		for i := range quoted {
			quoted[i] = strconv.Quote(uuid.NewString())
		}
		value = "[" + strings.Join(quoted, ",") + "]"
	}
	selection := fmt.Sprintf("%s(%s) { __typename }", field, strings.Join(append(required, arg+": "+value), ", "))
	query := "{ " + selection + " }"
	if typ != "Query" {
		id, ok := ids[typ]
		if !ok {
			t.Errorf("%s.%s: no %s in the demo data to reach it from", typ, field, typ)
			return
		}
		query = fmt.Sprintf(`{ node(id: %q) { ... on %s { %s } } }`, id, typ, selection)
	}
	res := srv.GraphQL(t, companyA, query, nil)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" || res.Errors[0].Extensions["field"] != arg {
		t.Errorf("%s.%s(%s: %d more than its max): got %+v, want INVALID_ARGUMENT on %s", typ, field, arg, maxSize+1, res.Errors, arg)
	}
	if arg == "ids" {
		return
	}
	// A null from a nullable variable, which validation lets through where
	// the argument has a default, must not unbound the list either.
	res = srv.GraphQL(t, companyA, "query($n: Int) "+strings.Replace(query, arg+": "+value, arg+": $n", 1), map[string]any{"n": nil})
	switch {
	case nonNull && (len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT"):
		t.Errorf("%s.%s(%s: null): got %+v, want INVALID_ARGUMENT: the argument is non-null", typ, field, arg, res.Errors)
	case !nonNull && len(res.Errors) > 0:
		t.Errorf("%s.%s(%s: null): got %+v, want the default size", typ, field, arg, res.Errors)
	}
}

// idsByType finds an id of each record type in the demo data.
func idsByType(t *testing.T, srv *apitest.Server) map[string]string {
	t.Helper()
	_, list := records(t, srv, companyA)
	inv := list.Inventories.Edges[0].Node
	return map[string]string{
		"Inventory":   inv.ID,
		"Property":    inv.Property.ID,
		"Environment": inv.Environments[0].ID,
		"Item":        inv.Environments[0].Items[0].ID,
		"Material":    inv.Environments[0].Items[0].Material.ID,
	}
}

// itemConnection is a material's items as the tests ask for them.
type itemConnection struct {
	TotalCount int `json:"totalCount"`
	Edges      []struct {
		Node struct {
			ID string `json:"id"`
		} `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool    `json:"hasNextPage"`
		EndCursor   *string `json:"endCursor"`
	} `json:"pageInfo"`
}

// TestNestedConnectionsPageWithTheirDefault walks a material's items, a
// connection that spans the company: without first it returns 20 a page
// (and loads no more than that from the database), and following the
// cursors holds every item exactly once.
func TestNestedConnectionsPageWithTheirDefault(t *testing.T) {
	var counter testdb.Counter
	srv, _ := demo(t, counter.Option())
	material := idsByType(t, srv)["Material"]
	type page struct {
		Node struct {
			Items itemConnection `json:"items"`
		} `json:"node"`
	}
	const query = `query($id: ID!, $after: Cursor) { node(id: $id) { ... on Material {
		items(after: $after) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } } } }`
	seen := map[string]bool{}
	var after any
	for pages := 0; ; pages++ {
		counter.Reset()
		var got page
		srv.MustData(t, companyA, query, map[string]any{"id": material, "after": after}, &got)
		items := got.Node.Items
		if items.TotalCount <= 20 {
			t.Fatalf("material %s has %d items: the demo data should give it more than a page", material, items.TotalCount)
		}
		if !strings.Contains(counter.Statements(), "LIMIT 21") {
			t.Errorf("page %d: no statement limits the items to a page and one:\n%s", pages, counter.Statements())
		}
		if want := min(20, items.TotalCount-len(seen)); len(items.Edges) != want {
			t.Fatalf("page %d: got %d items, want %d", pages, len(items.Edges), want)
		}
		for _, e := range items.Edges {
			if seen[e.Node.ID] {
				t.Fatalf("item %s seen twice", e.Node.ID)
			}
			seen[e.Node.ID] = true
		}
		if !items.PageInfo.HasNextPage {
			if len(seen) != items.TotalCount {
				t.Errorf("the walk held %d items, want %d", len(seen), items.TotalCount)
			}
			return
		}
		after = *items.PageInfo.EndCursor
	}
}

// A forged cursor is the client's mistake: refused with INVALID_ARGUMENT
// before anything loads, never a panic (entgql decodes nested connections'
// cursors itself) nor an INTERNAL (a value of the wrong type for its order
// field would reach SQL).
func TestForgedCursorsAreRefused(t *testing.T) {
	srv, _ := demo(t)
	material := idsByType(t, srv)["Material"]
	forged := func(value any) string {
		var b strings.Builder
		scalar.MarshalCursor(entgql.Cursor[uuid.UUID]{ID: uuid.New(), Value: value}).MarshalGQL(&b)
		return strings.Trim(b.String(), `"`)
	}
	for _, tt := range []struct{ cursor, orderBy string }{
		{"not base64!", ""},
		{"bm90IG1zZ3BhY2s", ""},
		{forged("abc"), ""},
		{forged("abc"), "RATING"},
		{forged(7), "NAME"},
	} {
		orderBy := ""
		if tt.orderBy != "" {
			orderBy = ", orderBy: {field: " + tt.orderBy + "}"
		}
		res := srv.GraphQL(t, companyA, `query($id: ID!, $after: Cursor) { node(id: $id) { ... on Material { items(after: $after`+orderBy+`) { totalCount } } } }`,
			map[string]any{"id": material, "after": tt.cursor})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" || res.Errors[0].Extensions["field"] != "after" {
			t.Errorf("after %q%s: got %+v, want INVALID_ARGUMENT on after", tt.cursor, orderBy, res.Errors)
		}
	}
	for _, tt := range []struct {
		value          any
		field, orderBy string
	}{{"abc", "inventories", "CREATED_AT"}, {"abc", "inventories", "RENTAL_PRICE"}, {"x", "inventories", "INVENTORY_TYPE"}, {3, "properties", "CITY"}} {
		res := srv.GraphQL(t, companyA, `query($after: Cursor) { `+tt.field+`(first: 2, after: $after, orderBy: {field: `+tt.orderBy+`}) { totalCount } }`,
			map[string]any{"after": forged(tt.value)})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" {
			t.Errorf("a %T cursor value ordered by %s: got %+v, want INVALID_ARGUMENT", tt.value, tt.orderBy, res.Errors)
		}
	}
}

// GraphQL coerces a single value given for a list argument to a list of one.
func TestASingleIDStandsForAListOfOne(t *testing.T) {
	srv, _ := demo(t)
	id := idsByType(t, srv)["Item"]
	var got struct {
		Nodes []struct{ ID string } `json:"nodes"`
	}
	srv.MustData(t, companyA, `query($id: [ID!]!) { nodes(ids: $id) { id } }`, map[string]any{"id": id}, &got)
	if len(got.Nodes) != 1 || got.Nodes[0].ID != id {
		t.Errorf("got %+v, want the one item %s", got.Nodes, id)
	}
}
