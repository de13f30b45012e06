package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/graph/querylimits"
	"github.com/propertyrecords/inventory/internal/compare"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The direct executor must answer exactly what gqlgen's would: these tests
// run every query on both and compare the bytes.

type differential struct {
	exec *Executor
	ctx  context.Context
}

func newDifferential(t *testing.T) *differential {
	t.Helper()
	store, err := files.Open(context.Background(), files.Options{URL: "mem://", SigningKey: []byte("a signing key of 32 bytes or so.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	st := testdb.DemoWithFiles.Open(t, store)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	ctx = files.WithBaseURL(ctx, "http://inventory.test")
	// Priced without a limit: every field of every type, counts and all,
	// costs more than a client may ask for at once.
	unpriced := querylimits.Default
	unpriced.Cost = 1 << 30
	return &differential{exec: NewExecutor(st.Client, st, store, slog.New(slog.NewTextHandler(io.Discard, nil)), ExecutorOptions{Limits: &unpriced}), ctx: ctx}
}

// signedURL matches the parts of a photo URL that depend on the second it was made.
var signedURL = regexp.MustCompile(`expires=\d+(&sha256=[0-9a-f]+)?&signature=[A-Za-z0-9_-]+`)

// run answers query on both executors. It reports whether the direct one
// answered, its answer, and gqlgen's response.
func (d *differential) run(t *testing.T, query string, vars map[string]any) (bool, string, *graphql.Response) {
	t.Helper()
	operation := func() (context.Context, *graphql.OperationContext) {
		ctx := graphql.StartOperationTrace(d.ctx)
		opCtx, errs := d.exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
		if errs != nil {
			t.Fatalf("%v\n%s", errs, query)
		}
		return ctx, opCtx
	}
	ctx, opCtx := operation()
	data, _, err := d.exec.runDirect(ctx, opCtx)
	ctx, opCtx = operation()
	responses, ctx := d.exec.Executor.DispatchOperation(ctx, opCtx)
	return err == nil, string(data), responses(ctx)
}

// same fails unless the direct executor answers query as gqlgen does.
func (d *differential) same(t *testing.T, query string, vars map[string]any) string {
	t.Helper()
	ok, direct, res := d.run(t, query, vars)
	if len(res.Errors) > 0 {
		t.Fatalf("gqlgen answered with errors %v: the query should succeed\n%s", res.Errors, query)
	}
	if !ok {
		t.Fatalf("the direct executor gave the query up, want it answered\n%s", query)
	}
	want := signedURL.ReplaceAllString(string(res.Data), "URL")
	if got := signedURL.ReplaceAllString(direct, "URL"); got != want {
		t.Fatalf("answers differ for\n%s\n direct: %s\n gqlgen: %s", query, clip(got, want), clip(want, got))
	}
	return want
}

// clip shows a from a little before where it first differs from b.
func clip(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(0, i-120)
	return "…" + a[start:min(len(a), i+200)] + "…"
}

// selectAll selects every field of typ down to depth, each argument left to
// its default: lists, connections and interfaces included.
func selectAll(schema *ast.Schema, typ string, depth int) string {
	return selectAllAs(schema, typ, depth, "")
}

// selectAllAs is selectAll with the fields of typ itself aliased with
// prefix, so that fragments on several types of an interface do not select
// one name with two types.
func selectAllAs(schema *ast.Schema, typ string, depth int, prefix string) string {
	def := schema.Types[typ]
	alias := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + name + ": " + name
	}
	var parts []string
	if def.Kind == ast.Interface || def.Kind == ast.Union {
		parts = append(parts, "__typename")
		for _, impl := range schema.GetPossibleTypes(def) {
			if depth > 0 {
				parts = append(parts, fmt.Sprintf("... on %s { %s }", impl.Name, selectAllAs(schema, impl.Name, depth-1, strings.ToLower(impl.Name)+"_")))
			}
		}
		return strings.Join(parts, " ")
	}
	parts = append(parts, "__typename")
	for _, f := range def.Fields {
		// A deprecated field is its twin under an old name
		// (TestIdsAreSpelledIdAndTheOldSpellingStillWorks): both would only
		// price the selection past the limit.
		if strings.HasPrefix(f.Name, "__") || requiresArguments(f) || f.Directives.ForName("deprecated") != nil {
			continue
		}
		child := schema.Types[f.Type.Name()]
		if child.Kind == ast.Scalar || child.Kind == ast.Enum {
			parts = append(parts, alias(f.Name))
			continue
		}
		if depth > 0 {
			parts = append(parts, fmt.Sprintf("%s { %s }", alias(f.Name), selectAll(schema, child.Name, depth-1)))
		}
	}
	return strings.Join(parts, " ")
}

func requiresArguments(f *ast.FieldDefinition) bool {
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}

// ids gives one id of each record type.
func (d *differential) ids(t *testing.T) map[string]string {
	t.Helper()
	ok, _, res := d.run(t, `{ inventories(first: 1, where: {isSigned: true}) { edges { node { id property { id }
		environments { id items { id material { id } photos { id } } } } } } }`, nil)
	if !ok || len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	var got struct {
		Inventories struct {
			Edges []struct {
				Node struct {
					ID           string
					Property     struct{ ID string }
					Environments []struct {
						ID    string
						Items []struct {
							ID       string
							Material struct{ ID string }
							Photos   []struct{ ID string }
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatal(err)
	}
	inv := got.Inventories.Edges[0].Node
	out := map[string]string{"Inventory": inv.ID, "Property": inv.Property.ID, "Environment": inv.Environments[0].ID}
	for _, env := range inv.Environments {
		for _, it := range env.Items {
			out["Item"], out["Material"] = it.ID, it.Material.ID
			if len(it.Photos) > 0 {
				out["Photo"] = it.Photos[0].ID
				return out
			}
		}
	}
	return out
}

func TestDirectExecutorAnswersAsGqlgenDoes(t *testing.T) {
	d := newDifferential(t)
	schema := NewExecutableSchema(Config{}).Schema()
	ids := d.ids(t)
	types := make([]string, 0, len(ids))
	for typ := range ids {
		types = append(types, typ)
	}
	sort.Strings(types)

	t.Run("every field of every type", func(t *testing.T) {
		for _, typ := range types {
			d.same(t, fmt.Sprintf(`{ node(id: %q) { ... on %s { %s } } }`, ids[typ], typ, selectAll(schema, typ, 3)), nil)
		}
		d.same(t, `{ inventories(first: 4, orderBy: {field: SIGNATURE_DATE, direction: DESC}) { `+selectAll(schema, "InventoryConnection", 4)+` } }`, nil)
		d.same(t, `{ properties(last: 3) { `+selectAll(schema, "PropertyConnection", 3)+` } }`, nil)
		d.same(t, `{ inventoryPage(page: 2, pageSize: 3) { `+selectAll(schema, "InventoryPage", 3)+` } }`, nil)
		d.same(t, `{ propertyPage(pageSize: 2) { `+selectAll(schema, "PropertyPage", 3)+` } }`, nil)
		var all []string
		for _, typ := range types {
			all = append(all, fmt.Sprintf("%q", ids[typ]))
		}
		d.same(t, `{ nodes(ids: [`+strings.Join(all, ", ")+`]) { `+selectAll(schema, "Node", 2)+` } }`, nil)
	})

	t.Run("the shapes of documents", func(t *testing.T) {
		vars := map[string]any{"id": ids["Inventory"], "yes": true, "no": false, "first": 2, "after": nil}
		for _, query := range []string{
			`{ __typename a: __typename }`,
			`query($id: ID!) { a: node(id: $id) { id } b: node(id: $id) { ... on Inventory { x: id y: isSigned } } }`,
			`query($id: ID!, $yes: Boolean!, $no: Boolean!) { node(id: $id) { ... on Inventory {
				id @include(if: $yes) currency @skip(if: $yes) isSigned @include(if: $no)
				environments { name ... @include(if: $yes) { level } ... @skip(if: $yes) { order } } } } }`,
			`query($first: Int!) { inventories(first: $first) { ...C } } fragment C on InventoryConnection { totalCount edges { ...E cursor } }
				fragment E on InventoryEdge { node { ...I } } fragment I on Inventory { id property { ...P } } fragment P on Property { city code }`,
			`query($id: ID!) { node(id: $id) { id ... on Inventory { id environments { id } environments { name } } } }`,
			`{ inventories(first: 3, where: {isSigned: false}) { edges { node { approvalCode signatureDate pdfUrl pdfSha256 } } } }`,
			`query($after: Cursor) { inventories(first: 2, after: $after) { edges { cursor } pageInfo { hasNextPage endCursor startCursor } } }`,
			`query($id: ID!) { node(id: $id) { ... on Inventory { environments(first: 1) { items(first: 2) { photos(first: 1) { id } } } } } }`,
		} {
			d.same(t, query, vars)
		}
		d.same(t, fmt.Sprintf(`{ node(id: %q) { ... on Material { items(first: 3, orderBy: {field: NAME, direction: DESC}, where: {rating: 4}) {
			totalCount edges { node { name rating } } } } } }`, ids["Material"]), nil)
		d.same(t, fmt.Sprintf(`{ node(id: %q) { ... on Property { inventories(orderBy: {field: CREATED_AT, direction: DESC}, where: {isSigned: true}) {
			totalCount edges { node { id } } pageInfo { hasNextPage } } } } }`, ids["Property"]), nil)
	})

	t.Run("the REST operations", func(t *testing.T) {
		files, err := filepath.Glob("../rest/operations/*.graphql")
		if err != nil || len(files) == 0 {
			t.Fatalf("no REST operations: %v", err)
		}
		fragments := ""
		for _, f := range files {
			text, _ := os.ReadFile(f)
			if strings.HasPrefix(strings.TrimSpace(stripComments(string(text))), "fragment") {
				fragments += string(text) + "\n"
			}
		}
		// B4 compares an inventory with itself: every item UNCHANGED.
		vars := map[string]any{"id": ids["Inventory"], "propertyId": ids["Property"], "page": 1, "pageSize": 20, "first": 20, "count": true,
			"from": ids["Inventory"], "to": ids["Inventory"],
			"direction": "DESC", "orderBy": map[string]any{"field": "CREATED_AT", "direction": "DESC"}}
		for _, f := range files {
			text, _ := os.ReadFile(f)
			doc := stripComments(string(text))
			if strings.HasPrefix(strings.TrimSpace(doc), "fragment") {
				continue
			}
			if strings.Contains(doc, "A3ItemPhotos") {
				vars["id"] = ids["Item"]
			} else if strings.Contains(doc, "A5Property") {
				vars["id"] = ids["Property"]
			} else {
				vars["id"] = ids["Inventory"]
			}
			for name := range fragmentSpreads(doc) {
				if !strings.Contains(doc, "fragment "+name) {
					doc += "\n" + fragmentNamed(fragments, name)
				}
			}
			d.same(t, doc, vars)
		}
	})

	t.Run("ids not found: null, no error", func(t *testing.T) {
		d.same(t, fmt.Sprintf(`{ node(id: %q) { id } }`, uuid.NewString()), nil)
		d.same(t, fmt.Sprintf(`{ nodes(ids: [%q, %q]) { id } }`, ids["Item"], uuid.NewString()), nil)
	})

	t.Run("what gqlgen answers with errors", func(t *testing.T) {
		for _, query := range []string{
			`{ __schema { queryType { name } } }`, // introspection
			// @defer, given up to gqlgen too, is shown by TestDeferIsDeliveredInPartsOrRefused:
			// outside multipart/mixed it is refused before any executor runs.
		} {
			ok, _, _ := d.run(t, query, nil)
			if ok {
				t.Errorf("the direct executor answered %s, want it given up to gqlgen", query)
			}
		}
	})
}

func stripComments(doc string) string {
	var lines []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

var spread = regexp.MustCompile(`\.\.\.([A-Za-z_]\w*)`)

func fragmentSpreads(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range spread.FindAllStringSubmatch(doc, -1) {
		if m[1] != "on" {
			out[m[1]] = true
		}
	}
	return out
}

func fragmentNamed(fragments, name string) string {
	i := strings.Index(fragments, "fragment "+name+" ")
	if i < 0 {
		return ""
	}
	rest := fragments[i:]
	if j := strings.Index(rest[1:], "\nfragment "); j >= 0 {
		return rest[:j+1]
	}
	return rest
}

// TestFieldErrorsAreAnsweredOnceAsGqlgenDoes: a field whose resolver
// fails, at the root or below it, or a nil where the schema does not allow
// one, is answered by the direct executor itself as gqlgen's executor
// answers it (the error at the field's path, list indices included, null
// for the field and up to the nearest position that may be null, partial
// data included), so that a failing query runs once: it ran on both
// executors, one after the other, before.
func TestFieldErrorsAreAnsweredOnceAsGqlgenDoes(t *testing.T) {
	var counter testdb.Counter
	store, err := files.Open(context.Background(), files.Options{URL: "mem://", SigningKey: []byte("a signing key of 32 bytes or so.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	st := testdb.DemoWithFiles.Open(t, store, counter.Option())
	d := &differential{exec: NewExecutor(st.Client, st, store, slog.New(slog.NewTextHandler(io.Discard, nil)), ExecutorOptions{}),
		ctx: files.WithBaseURL(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]), "http://inventory.test")}
	ids := d.ids(t)
	// Failures no client can cause (client input is refused before any
	// executor runs): the photo's URL cannot be signed, the comparison is
	// nil without an error.
	photo, comparison := uuid.MustParse(ids["Photo"]), uuid.New()
	d.exec.schema.Resolvers = failingResolvers{ResolverRoot: d.exec.schema.Resolvers, photo: photo, comparison: comparison}
	unknown, company := uuid.NewString(), d.ctx
	for _, tc := range []struct {
		name, query string
		ctx         context.Context
	}{
		{"a non-null root field: null data", fmt.Sprintf(`{ inventoryComparison(from: %q, to: %q) { id } }`, unknown, unknown), nil},
		{"two root fields failing, and one answered", fmt.Sprintf(`{ a: node(id: %q) { id } b: inventoryComparison(from: %q, to: %q) { id }
			c: inventoryComparison(from: %q, to: %q) { id } }`, ids["Inventory"], unknown, ids["Inventory"], ids["Inventory"], unknown), nil},
		{"a nullable root field: partial data", fmt.Sprintf(`{ __typename node(id: %q) { id } }`, ids["Inventory"]), context.Background()},
		{"a nil non-null root field: null data", fmt.Sprintf(`{ inventoryComparison(from: %q, to: %q) { id } }`, comparison, comparison), nil},
		{"a field below the root: null up to the nearest nullable position", fmt.Sprintf(`{ node(id: %q) { id ... on Photo { url } } }`, photo), nil},
		{"a field in lists: its path has their indices, and its list is null", fmt.Sprintf(`{ node(id: %q) { ... on Inventory { id
			environments { name items { name photos { id url } } } } } }`, ids["Inventory"]), nil},
		{"a field in lists of a connection", `{ inventories(first: 5, where: {isSigned: true}) { totalCount edges { cursor node { id
			environments { id items { id photos { url } } } } } } }`, nil},
		{"two fields failing in one object, and a nullable one after", fmt.Sprintf(`{ node(id: %q) { ... on Photo { a: url id b: url } } x: node(id: %q) { id } }`,
			photo, ids["Item"]), nil},
	} {
		d.ctx = company
		if tc.ctx != nil {
			d.ctx = tc.ctx
		}
		counter.Reset()
		ok, direct, res := d.run(t, tc.query, nil)
		both := counter.Count()
		if !ok {
			t.Errorf("%s: the direct executor gave the query up, want it answered", tc.name)
			continue
		}
		// Photo URLs say the second they were signed: the two runs may fall on either side of one.
		if len(res.Errors) == 0 || signedURL.ReplaceAllString(direct, "URL") != signedURL.ReplaceAllString(string(res.Data), "URL") {
			t.Errorf("%s: data differ\n direct: %s\n gqlgen: %s (errors %v)", tc.name, direct, res.Data, res.Errors)
		}
		// Its errors, as the executor answers them: the same as gqlgen's.
		ctx := graphql.StartOperationTrace(d.ctx)
		opCtx, errs := d.exec.CreateOperationContext(ctx, &graphql.RawParams{Query: tc.query})
		if errs != nil {
			t.Fatal(errs)
		}
		counter.Reset()
		responses, ctx := d.exec.DispatchOperation(ctx, opCtx)
		answer := responses(ctx)
		once := counter.Count()
		if got, want := errorTexts(answer.Errors), errorTexts(res.Errors); got != want {
			t.Errorf("%s: errors differ\n direct: %s\n gqlgen: %s", tc.name, got, want)
		}
		if signedURL.ReplaceAllString(string(answer.Data), "URL") != signedURL.ReplaceAllString(string(res.Data), "URL") {
			t.Errorf("%s: the executor's data %s, want gqlgen's %s", tc.name, answer.Data, res.Data)
		}
		if 2*once != both {
			t.Errorf("%s: %d statements answering it, %d for both executors: want it run once", tc.name, once, both)
		}
	}
}

// failingResolvers fails the URL of one photo, and answers one comparison
// with nil and no error.
type failingResolvers struct {
	ResolverRoot
	photo, comparison uuid.UUID
}

func (r failingResolvers) Photo() PhotoResolver {
	return failingPhoto{PhotoResolver: r.ResolverRoot.Photo(), id: r.photo}
}

func (r failingResolvers) Query() QueryResolver {
	return nilComparison{QueryResolver: r.ResolverRoot.Query(), id: r.comparison}
}

type failingPhoto struct {
	PhotoResolver
	id uuid.UUID
}

func (p failingPhoto) URL(ctx context.Context, obj *ent.Photo) (string, error) {
	if obj.ID == p.id {
		return "", errors.New("the photo's URL cannot be signed")
	}
	return p.PhotoResolver.URL(ctx, obj)
}

type nilComparison struct {
	QueryResolver
	id uuid.UUID
}

func (q nilComparison) InventoryComparison(ctx context.Context, from, to uuid.UUID) (*compare.Comparison, error) {
	if from == q.id {
		return nil, nil
	}
	return q.QueryResolver.InventoryComparison(ctx, from, to)
}

// errorTexts is errs as JSON, sorted: gqlgen resolves root fields at once,
// in no fixed order.
func errorTexts(errs gqlerror.List) string {
	var texts []string
	for _, e := range errs {
		b, _ := json.Marshal(e)
		texts = append(texts, string(b))
	}
	sort.Strings(texts)
	return strings.Join(texts, "\n")
}
