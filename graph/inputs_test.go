package graph_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/graph/querylimits"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/scalar"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

// loggedDemo serves the demo data, as demo does, keeping the server's log.
func loggedDemo(t *testing.T, opts ...store.Option) (*apitest.Server, *store.Store, *apitest.LogBuffer) {
	t.Helper()
	st := testdb.DemoRecords.Open(t, opts...)
	logs := &apitest.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	hs := httptest.NewServer(server.Handler(st, log, server.Options{RESTBaseURL: rest.DefaultBaseURL, Files: apitest.Files(t)}))
	t.Cleanup(hs.Close)
	return &apitest.Server{URL: hs.URL}, st, logs
}

// inputCase is a request whose arguments are hostile or at a limit. wantField
// is the argument path of the one INVALID_ARGUMENT that refuses it ("" when
// it is answered; a path ending in "." names only the start of the path),
// and wantText what its message must say.
type inputCase struct {
	name      string
	query     string
	vars      map[string]any
	wantField string
	wantText  string
}

// checkInputCases sends each case and checks that it is answered, or refused
// as it says before any SQL statement; and that nothing was logged at ERROR.
func checkInputCases(t *testing.T, srv *apitest.Server, counter *testdb.Counter, logs *apitest.LogBuffer, cases []inputCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counter.Reset()
			res := srv.GraphQL(t, companyA, c.query, c.vars)
			if c.wantField == "" {
				if len(res.Errors) > 0 || string(res.Data) == "null" {
					raw, _ := json.Marshal(res.Errors)
					t.Fatalf("got data %.100s and errors %.400s, want an answer", res.Data, raw)
				}
				return
			}
			raw, _ := json.Marshal(res.Errors)
			if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" {
				t.Fatalf("got %.400s, want one INVALID_ARGUMENT", raw)
			}
			e := res.Errors[0]
			field, _ := e.Extensions["field"].(string)
			if prefix, ok := strings.CutSuffix(c.wantField, "."); ok && !strings.HasPrefix(field, prefix+".") ||
				!ok && field != c.wantField {
				t.Errorf("field %q, want %q", field, c.wantField)
			}
			if !strings.Contains(e.Message, c.wantText) || !strings.HasPrefix(e.Message, field+": ") {
				t.Errorf("message %q, want the field, then %q", e.Message, c.wantText)
			}
			if strings.ContainsRune(e.Message, 0) {
				t.Errorf("message %q echoes the NUL", e.Message)
			}
			if n := counter.Count(); n > 0 {
				t.Errorf("refused after %d SQL statements, want none:\n%.500s", n, counter.Statements())
			}
		})
	}
	if lines := logs.ErrorLines(); len(lines) > 0 {
		t.Errorf("logged at ERROR:\n%.2000s", strings.Join(lines, ""))
	}
}

const (
	propertiesWhere  = `query($w: PropertyWhereInput) { properties(where: $w) { totalCount } }`
	inventoryPageOf  = `query($w: InventoryWhereInput) { inventoryPage(where: $w) { totalRecords data { id } } }`
	inventoriesWhere = `query($w: InventoryWhereInput) { inventories(where: $w) { totalCount } }`
)

// TestHostileInputValuesAreInvalidArguments: values the database cannot take
// (a NUL character, in text or in a cursor) and filters entgql cannot build
// (an empty one inside another) are refused by name, on both databases,
// before any SQL: they were INTERNAL errors, logged as such.
func TestHostileInputValuesAreInvalidArguments(t *testing.T) {
	var counter testdb.Counter
	srv, _, logs := loggedDemo(t, counter.Option())
	cursor := func(value any) string {
		var b strings.Builder
		scalar.MarshalCursor(entgql.Cursor[uuid.UUID]{ID: uuid.New(), Value: value}).MarshalGQL(&b)
		s, err := strconv.Unquote(b.String())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const afterCity = `query($c: Cursor) { properties(first: 1, after: $c, orderBy: {field: CITY, direction: ASC}) { edges { node { id } } } }`
	const nul = "must not contain a NUL character"
	const empty = "is an empty filter"
	checkInputCases(t, srv, &counter, logs, []inputCase{
		{name: "NUL in a literal", query: `{ properties(where: {cityContains: "a\u0000b"}) { totalCount } }`,
			wantField: "where.cityContains", wantText: nul},
		{name: "NUL in a braced escape", query: `{ properties(where: {address: "a\u{0}"}) { totalCount } }`,
			wantField: "where.address", wantText: nul},
		{name: "NUL in a variable, deep in a list", query: propertiesWhere,
			vars:      map[string]any{"w": map[string]any{"or": []any{map[string]any{"city": "a"}, map[string]any{"cityIn": []any{"b", "c\x00"}}}}},
			wantField: "where.or[1].cityIn[1]", wantText: nul},
		{name: "NUL in an ID", query: `query($id: ID!) { node(id: $id) { id } }`, vars: map[string]any{"id": "\x00"},
			wantField: "id", wantText: nul},
		{name: "NUL in a nested connection's filter", query: `{ properties(first: 1) { edges { node { inventories(where: {currency: "\u0000"}) { totalCount } } } } }`,
			wantField: "where.currency", wantText: nul},
		{name: "NUL in a cursor's value", query: afterCity, vars: map[string]any{"c": cursor("a\x00b")},
			wantField: "after", wantText: "is not a cursor this API gave out"},
		{name: "a cursor's value without NUL", query: afterCity, vars: map[string]any{"c": cursor("ab")}},

		{name: "an empty not", query: `{ properties(where: {not: {}}) { totalCount } }`, wantField: "where.not", wantText: empty},
		{name: "an empty filter in or", query: inventoryPageOf,
			vars: map[string]any{"w": map[string]any{"or": []any{map[string]any{"isSigned": true}, map[string]any{}}}}, wantField: "where.or[1]", wantText: empty},
		{name: "a filter of nulls and empty lists", query: `{ inventories(where: {hasPropertyWith: [{not: {idIn: [], city: null}}]}) { totalCount } }`,
			wantField: "where.hasPropertyWith[0].not", wantText: empty},
		{name: "a filter of IsNil and NotNil false", query: inventoryPageOf,
			vars:      map[string]any{"w": map[string]any{"or": []any{map[string]any{"signatureDateIsNil": false, "approvalCodeNotNil": false}}}},
			wantField: "where.or[0]", wantText: empty},
		{name: "a literal filter of NotNil false", query: `{ properties(where: {not: {detailNotNil: false}}) { totalCount } }`,
			wantField: "where.not", wantText: empty},
		{name: "IsNil true is a condition", query: `{ properties(where: {not: {detailIsNil: true}}) { totalCount } }`},
		{name: "an empty filter of a nested connection", query: `{ properties(first: 1) { edges { node { inventories(where: {and: [{}]}) { totalCount } } } } }`,
			wantField: "where.and[0]", wantText: empty},
		{name: "an empty argument filters nothing", query: `{ properties(where: {}) { totalCount } }`},
		{name: "an empty or filters nothing", query: `{ properties(where: {or: [], not: {city: "x"}}) { totalCount } }`},
	})
}

// inputValue is a value of the named input type, distinct for each i.
func inputValue(schema *ast.Schema, typ string, i int) (any, bool) {
	switch typ {
	case "String":
		return "v" + strconv.Itoa(i), true
	case "ID":
		return uuid.NewString(), true
	case "Int":
		return i, true
	case "Boolean":
		return i%2 == 0, true
	case "Time":
		return time.Unix(int64(i), 0).UTC().Format(time.RFC3339), true
	case "Decimal":
		return strconv.Itoa(i) + ".00", true
	}
	if def := schema.Types[typ]; def != nil && def.Kind == ast.Enum {
		return def.EnumValues[i%len(def.EnumValues)].Name, true
	}
	return nil, false
}

// filter is a filter of type typ that sets n of its fields to values (a
// list of one for a list field), skipping those that take filters.
func filter(schema *ast.Schema, typ string, n int) map[string]any {
	out := map[string]any{}
	// Text searches last: the cost check prices them as the scans they are,
	// and sizes are what these filters test.
	for _, text := range []bool{false, true} {
		for _, f := range schema.Types[typ].Fields {
			if len(out) == n {
				return out
			}
			v, ok := inputValue(schema, f.Type.Name(), len(out))
			if !ok || isTextSearch(f.Name) != text {
				continue
			}
			if f.Type.Elem != nil {
				v = []any{v}
			}
			out[f.Name] = v
		}
	}
	if len(out) == n {
		return out
	}
	panic(fmt.Sprintf("%s has fewer than %d fields of values", typ, n))
}

// isTextSearch reports whether a where input field is a text search.
func isTextSearch(name string) bool {
	for _, suffix := range []string{"Contains", "ContainsFold", "HasPrefix", "HasSuffix", "EqualFold"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// lists is a filter of type typ with n of its list fields holding size values each.
func lists(schema *ast.Schema, typ string, n, size int) map[string]any {
	out := map[string]any{}
	for _, f := range schema.Types[typ].Fields {
		if len(out) == n {
			return out
		}
		if f.Type.Elem == nil {
			continue
		}
		var values []any
		for i := range size {
			v, ok := inputValue(schema, f.Type.Name(), i)
			if !ok {
				break
			}
			values = append(values, v)
		}
		if len(values) == size {
			out[f.Name] = values
		}
	}
	panic(fmt.Sprintf("%s has fewer than %d list fields of values", typ, n))
}

// inputSize counts what the input check counts of v: the fields it sets,
// the scalar values it holds and the depth of its input objects.
func inputSize(v any) (fields, values, depth int) {
	switch v := v.(type) {
	case map[string]any:
		for _, item := range v {
			f, n, d := inputSize(item)
			if n > 0 || f > 0 {
				fields++
			}
			fields, values, depth = fields+f, values+n, max(depth, d)
		}
		return fields, values, depth + 1
	case []any:
		for _, item := range v {
			f, n, d := inputSize(item)
			fields, values, depth = fields+f, values+n, max(depth, d)
		}
		return fields, values, depth
	}
	return 0, 1, 0
}

// TestInputLimits holds each input limit: a request at it is answered, on
// SQLite and on PostgreSQL, in the shapes that cost the database the most
// (bind parameters, and the depth of the SQL expression a filter makes); one
// past it is refused, naming the argument and the limit, before any SQL.
// Past them, SQLite refused 3,000 filters in one or (an expression tree over
// 1,000 deep) and both databases 70,000 values in one list.
func TestInputLimits(t *testing.T) {
	var counter testdb.Counter
	srv, _, logs := loggedDemo(t, counter.Option())
	limits := querylimits.Default
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()

	ors := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"city": "c" + strconv.Itoa(i)}
		}
		return out
	}
	// nots is a filter nesting depth input objects through not, setting
	// fields fields in all (one of each object's is its not).
	nots := func(depth, fields int) map[string]any {
		per := (fields - (depth - 1)) / depth
		w := filter(schema, "PropertyWhereInput", fields-(depth-1)-per*(depth-1))
		for range depth - 1 {
			outer := filter(schema, "PropertyWhereInput", per)
			outer["not"] = w
			w = outer
		}
		return w
	}
	// orChain is levels nested ors of 100 filters, the first of each holding
	// the next, and the last a filter of inner fields: SQLite's expression
	// for it is about as deep as it has fields.
	var orChain func(levels, inner int) map[string]any
	orChain = func(levels, inner int) map[string]any {
		if levels == 0 {
			return filter(schema, "PropertyWhereInput", inner)
		}
		items := ors(limits.InputObjectList)
		items[0] = orChain(levels-1, inner)
		return map[string]any{"or": items}
	}
	// across is a filter of inventories through their property and its
	// inventories again, depth input objects deep (each step a subquery),
	// setting per fields at each step and or filters at the top: fields in
	// all 16 × 30 + 15 edges + 1 or + 4 = 500.
	var across func(level, depth, per int) map[string]any
	across = func(level, depth, per int) map[string]any {
		typ, edge := "InventoryWhereInput", "hasPropertyWith"
		if level%2 == 1 {
			typ, edge = "PropertyWhereInput", "hasInventoriesWith"
		}
		w := filter(schema, typ, per)
		if level < depth-1 {
			w[edge] = []any{across(level+1, depth, per)}
		}
		return w
	}
	acrossTop := across(0, limits.InputNesting, 30)
	acrossTop["or"] = []any{}
	for i := range limits.InputFields - limits.InputNesting*30 - (limits.InputNesting - 1) - 1 {
		acrossTop["or"] = append(acrossTop["or"].([]any), map[string]any{"currency": "c" + strconv.Itoa(i)})
	}

	tooManyValues := lists(schema, "PropertyWhereInput", limits.InputValues/limits.InputList, limits.InputList)
	plusOne := `query($w: PropertyWhereInput) { properties(where: $w) { totalCount } more: properties(where: {city: "x"}) { totalCount } }`

	atLimit := []struct {
		name                  string
		vars                  map[string]any
		fields, values, depth int // what the input check counts, for those at a limit
	}{
		{name: "a list of ids at the limit", vars: map[string]any{"w": lists(schema, "PropertyWhereInput", 1, limits.InputList)}, values: limits.InputList},
		{name: "values at the limit, in lists at theirs", vars: map[string]any{"w": tooManyValues}, values: limits.InputValues},
		{name: "filters in one or at the limit", vars: map[string]any{"w": map[string]any{"or": ors(limits.InputObjectList)}}},
		{name: "nesting at the limit", vars: map[string]any{"w": nots(limits.InputNesting, limits.InputNesting)}, depth: limits.InputNesting},
		{name: "fields at the limit, nested as deep as allowed", vars: map[string]any{"w": nots(limits.InputNesting, limits.InputFields)},
			fields: limits.InputFields, depth: limits.InputNesting},
		{name: "fields at the limit, in ors of ors", vars: map[string]any{"w": orChain(4, limits.InputFields-4*limits.InputObjectList)}, fields: limits.InputFields},
	}
	var cases []inputCase
	for _, c := range atLimit {
		fields, values, depth := inputSize(c.vars["w"])
		if c.fields > 0 && fields != c.fields || c.values > 0 && values != c.values || c.depth > 0 && depth != c.depth {
			t.Fatalf("%s: the filter sets %d fields of %d values %d deep, want %d, %d, %d", c.name, fields, values, depth, c.fields, c.values, c.depth)
		}
		cases = append(cases, inputCase{name: c.name, query: propertiesWhere, vars: c.vars})
	}
	if fields, _, depth := inputSize(acrossTop); fields != limits.InputFields || depth != limits.InputNesting {
		t.Fatalf("the filter across subqueries sets %d fields %d deep, want %d and %d", fields, depth, limits.InputFields, limits.InputNesting)
	}
	cases = append(cases,
		inputCase{name: "fields and nesting at the limit, through subqueries", query: inventoryPageOf, vars: map[string]any{"w": acrossTop}},
		inputCase{name: "the same as a connection", query: inventoriesWhere, vars: map[string]any{"w": acrossTop}},
		inputCase{name: "a literal or at the limit", query: `{ properties(where: {or: [` + strings.Repeat(`{city: "x"} `, limits.InputObjectList) + `]}) { totalCount } }`},
	)

	huge := make([]any, 70_000)
	for i := range huge {
		huge[i] = strconv.Itoa(i)
	}
	deeper := nots(limits.InputNesting+1, limits.InputNesting+1)
	over := strconv.Itoa
	cases = append(cases, []inputCase{
		{name: "a list of ids past the limit", query: propertiesWhere, vars: map[string]any{"w": lists(schema, "PropertyWhereInput", 1, limits.InputList+1)},
			wantField: "where.idIn", wantText: over(limits.InputList)},
		{name: "70,000 values in one list", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"cityIn": huge}},
			wantField: "where.cityIn", wantText: over(limits.InputList)},
		{name: "values past the limit", query: plusOne, vars: map[string]any{"w": tooManyValues},
			wantField: "where.city", wantText: over(limits.InputValues)},
		{name: "a variable used twice counts twice", query: `query($w: PropertyWhereInput) { a: properties(where: $w) { totalCount } b: properties(where: $w) { totalCount } }`,
			vars:      map[string]any{"w": lists(schema, "PropertyWhereInput", limits.InputValues/limits.InputList/2+1, limits.InputList)},
			wantField: "where.", wantText: over(limits.InputValues)},
		{name: "filters in one or past the limit", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"or": ors(limits.InputObjectList + 1)}},
			wantField: "where.or", wantText: over(limits.InputObjectList)},
		{name: "3,000 filters in one or", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"or": ors(3_000)}},
			wantField: "where.or", wantText: over(limits.InputObjectList)},
		{name: "a literal or past the limit", query: `{ properties(where: {or: [` + strings.Repeat(`{city: "x"} `, limits.InputObjectList+1) + `]}) { totalCount } }`,
			wantField: "where.or", wantText: over(limits.InputObjectList)},
		{name: "nesting past the limit", query: propertiesWhere, vars: map[string]any{"w": deeper},
			wantField: "where" + strings.Repeat(".not", limits.InputNesting), wantText: over(limits.InputNesting)},
		{name: "literal nesting past the limit", query: `{ properties(where: ` + repeat(`{not: `, `{city: "x"}`, `}`, limits.InputNesting) + `) { totalCount } }`,
			wantField: "where" + strings.Repeat(".not", limits.InputNesting), wantText: over(limits.InputNesting)},
		{name: "fields past the limit", query: plusOne, vars: map[string]any{"w": nots(limits.InputNesting, limits.InputFields)},
			wantField: "where.city", wantText: over(limits.InputFields)},
	}...)
	checkInputCases(t, srv, &counter, logs, cases)
}

// TestLongStringsAreInvalidArguments: every string value, literal or
// variable, filter text or id, is bounded in characters, on both databases
// and before any SQL. A Contains filter over 50,000 bytes was an INTERNAL
// error on SQLite (its LIKE pattern limit). The message quotes a prefix.
func TestLongStringsAreInvalidArguments(t *testing.T) {
	var counter testdb.Counter
	srv, _, logs := loggedDemo(t, counter.Option())
	limit := querylimits.Default.InputString
	const want = "characters long, more than"
	atLimit := strings.Repeat("é", limit) // twice as many bytes: characters are counted
	over := strings.Repeat("x", limit+1)
	huge := strings.Repeat("ab", 25_001)
	cases := []inputCase{
		{name: "a literal Contains over SQLite's pattern limit", query: `{ properties(where: {cityContains: "` + huge + `"}) { totalCount } }`,
			wantField: "where.cityContains", wantText: want},
		{name: "a variable Contains on unbounded text", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"detailContains": huge}},
			wantField: "where.detailContains", wantText: want},
		{name: "one character over, in a list", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"cityIn": []any{"Cali", over}}},
			wantField: "where.cityIn[1]", wantText: fmt.Sprintf("is %d characters long, more than %d", limit+1, limit)},
		{name: "an id", query: `query($id: ID!) { node(id: $id) { id } }`, vars: map[string]any{"id": over},
			wantField: "id", wantText: want},
		{name: "a cursor", query: `query($c: Cursor) { properties(first: 1, after: $c) { totalCount } }`, vars: map[string]any{"c": over},
			wantField: "after", wantText: want},
		{name: "a block string", query: `{ properties(where: {addressHasPrefix: """` + over + `"""}) { totalCount } }`,
			wantField: "where.addressHasPrefix", wantText: want},
		{name: "at the limit, in characters", query: propertiesWhere, vars: map[string]any{"w": map[string]any{"detailContains": atLimit}}},
		{name: "at the limit, a literal", query: `{ properties(where: {cityContains: "` + atLimit + `"}) { totalCount } }`},
	}
	checkInputCases(t, srv, &counter, logs, cases)
	res := srv.GraphQL(t, companyA, propertiesWhere, map[string]any{"w": map[string]any{"cityContains": huge}})
	if len(res.Errors) != 1 || len(res.Errors[0].Message) > 200 || !strings.Contains(res.Errors[0].Message, `"abab`) ||
		strings.Contains(res.Errors[0].Message, strings.Repeat("ab", 33)) {
		t.Errorf("the refusal of a long value: %+v, want a short message quoting at most its first 64 bytes", res.Errors)
	}
}
