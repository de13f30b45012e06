package querylimits_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/graph/querylimits"
)

// nestedTree is the front end's nested tree: inventories with their property,
// environments, items, materials and photos (the bench's queries (a) and (b)).
const nestedTree = `query($first: Int!) { inventories(first: $first, orderBy: {field: CREATED_AT, direction: ASC}) {
	edges { node { id createdAt rentalPrice isSigned property { id address city }
		environments { id name level items { id name rating toRepair material { id name } photos { id storageReference } } } } } } }`

// price parses and validates query and prices it as the cost check does.
func price(t *testing.T, query string, vars map[string]any) int {
	t.Helper()
	exec := graph.NewExecutor(nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), graph.ExecutorOptions{})
	ctx := graphql.StartOperationTrace(context.Background())
	opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
	if errs != nil && !strings.Contains(errs.Error(), "exceeds") && !strings.Contains(errs.Error(), "more than") {
		t.Fatalf("%s: %v", query, errs)
	}
	return querylimits.Price(graph.NewExecutableSchema(graph.Config{}).Schema(), opCtx.Operation.SelectionSet, opCtx.Variables)
}

// TestPrices holds the figures docs/decisions.md gives for the price of the
// trees front ends ask for, against querylimits.Default.Cost.
func TestPrices(t *testing.T) {
	for _, tt := range []struct {
		name     string
		query    string
		vars     map[string]any
		min, max int
	}{
		{"20 whole inventories (bench b)", nestedTree, map[string]any{"first": 20}, 250_000, 300_000},
		{"3 whole inventories (bench a)", nestedTree, map[string]any{"first": 3}, 35_000, 50_000},
		{"100 inventories' item names", `{ inventories(first: 100) { edges { node { id environments { items { id name } } } } } }`, nil, 150_000, 250_000},
		{"36 whole inventories", nestedTree, map[string]any{"first": 36}, querylimits.Default.Cost + 1, 600_000},
		// Issue 34: a photo's decode, up to a second of a core, is priced
		// at a second of the budget's restore rate, beside its row.
		{"addItemPhoto", `mutation($file: Upload!) { addItemPhoto(itemId: "11111111-1111-4111-8111-111111111111", file: $file) { photo { id url sha256 } } }`,
			map[string]any{"file": graphql.Upload{Filename: "a.jpg"}}, querylimits.PhotoDecodePrice + querylimits.WriteRowPrice, querylimits.PhotoDecodePrice + querylimits.WriteRowPrice + 10},
		{"two photos in one operation", `mutation($file: Upload!) { a: addItemPhoto(itemId: "11111111-1111-4111-8111-111111111111", file: $file) { photo { id } }
			b: addItemPhoto(itemId: "11111111-1111-4111-8111-111111111111", file: $file) { photo { id } } }`,
			map[string]any{"file": graphql.Upload{Filename: "a.jpg"}}, 2 * (querylimits.PhotoDecodePrice + querylimits.WriteRowPrice), 2*(querylimits.PhotoDecodePrice+querylimits.WriteRowPrice) + 10},
		{"a material's items, 3 levels of 100",
			`query($id: ID!) { node(id: $id) { ... on Material { items(first: 100) { edges { node { material { items(first: 100) { edges { node { material { items(first: 100) { edges { node { id } } } } } } } } } } } } } }`,
			map[string]any{"id": "11111111-1111-4111-8111-111111111111"}, querylimits.Default.Cost + 1, 1 << 30},
	} {
		got := price(t, tt.query, tt.vars)
		t.Logf("%s: %d", tt.name, got)
		if got < tt.min || got > tt.max {
			t.Errorf("%s: price %d, want %d to %d", tt.name, got, tt.min, tt.max)
		}
	}
}

// TestDatabaseWorkIsPriced holds the price of what the database does beyond
// the rows it returns (filters, counts, the repair list, page offsets):
// documents that kept PostgreSQL busy to the deadline on the million-item
// set are over the limit, and what front ends and REST ask for stays cheap.
func TestDatabaseWorkIsPriced(t *testing.T) {
	repeat := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
			b.WriteByte(' ')
		}
		return b.String()
	}
	ors := repeat(100, func(i int) string { return fmt.Sprintf(`{hasPropertyWith: {addressContainsFold: "calle %d"}}`, i) })
	counts := repeat(160, func(i int) string { return fmt.Sprintf(`c%d: items(where: {rating: %d}) { totalCount }`, i, i%5+1) })
	materialIDs := `["` + strings.Repeat(`11111111-1111-4111-8111-111111111111", "`, 11) + `11111111-1111-4111-8111-111111111111"]`
	refused := []struct{ name, query string }{
		{"100 text searches across an edge, counted", `{ inventories(where: {or: [` + ors + `]}) { totalCount } }`},
		{"160 filtered counts under 12 materials", `{ nodes(ids: ` + materialIDs + `) { ... on Material { ` + counts + ` } } }`},
		{"50 repair lists", `{ ` + repeat(50, func(i int) string { return fmt.Sprintf(`r%d: repairs(first: 100) { edges { node { id } } }`, i) }) + ` }`},
		{"100 deep repair pages", `{ ` + repeat(100, func(i int) string { return fmt.Sprintf(`p%d: repairPage(page: %d) { data { id } }`, i, 1000+i) }) + ` }`},
		{"5 pages a million rows deep", `{ ` + repeat(5, func(i int) string {
			return fmt.Sprintf(`p%d: inventoryPage(page: %d, pageSize: 100) { data { id } }`, i, 10001+i)
		}) + ` }`},
	}
	for _, tt := range refused {
		if got := price(t, tt.query, nil); got <= querylimits.Default.Cost {
			t.Errorf("%s: price %d, want over the limit %d", tt.name, got, querylimits.Default.Cost)
		}
	}
	ide, err := os.ReadFile("../../internal/ide/example.graphql")
	if err != nil {
		t.Fatal(err)
	}
	cheap := []struct {
		name, query string
		max         int
	}{
		{"a page of 20 with its count and a filter", `{ inventoryPage(page: 3, where: {isSigned: true, hasPropertyWith: {city: "Bogotá"}}) { totalRecords data { id createdAt } } }`, 10_000},
		{"a connection's count", `{ inventories(first: 20, where: {isSigned: true}) { totalCount edges { node { id } } } }`, 5_000},
		{"one repair list", `{ repairs(first: 100, where: {city: "Bogotá"}) { totalCount edges { node { id name } } } }`, 70_000},
		{"the IDE's query", string(ide), 60_000},
		{"the last page of 100,000 inventories", `{ inventoryPage(page: 1000, pageSize: 100) { data { id } } }`, 150_000},
	}
	for _, tt := range cheap {
		got := price(t, tt.query, nil)
		t.Logf("%s: %d", tt.name, got)
		if got > tt.max {
			t.Errorf("%s: price %d, want at most %d", tt.name, got, tt.max)
		}
	}
}

// TestEveryOrderFieldHasItsCursorType holds cursorValues to the schema: a
// new order field without an entry would refuse its own cursors.
func TestEveryOrderFieldHasItsCursorType(t *testing.T) {
	checked := 0
	for name, def := range graph.NewExecutableSchema(graph.Config{}).Schema().Types {
		if !strings.HasSuffix(name, "OrderField") {
			continue
		}
		for _, v := range def.EnumValues {
			if !querylimits.HasCursorType(v.Name) {
				t.Errorf("%s.%s has no entry in cursorValues", name, v.Name)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Error("found no order fields")
	}
}
