package graph_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/graph/querylimits"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// bomb is a request built to make the server do far more work than its size.
type bomb struct {
	name    string
	company string // "" sends none
	query   string
	vars    map[string]any
	// want is the error code that refuses it; "" means it is answered.
	want string
}

// repeat nests open n times around inner, closing each with close.
func repeat(open, inner, closing string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(closing, n)
}

// fields is n aliased selections of id: prefix0: id prefix1: id …
func fields(prefix string, n int) string {
	return repeatN(n, func(i int) string { return fmt.Sprintf("%s%d: id ", prefix, i) })
}

func repeatN(n int, part func(int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(part(i))
	}
	return b.String()
}

// fanOut is n fragments, each spreading the one before twice: 2^n fields
// in a document of a few hundred bytes.
func fanOut(n int) string {
	var b strings.Builder
	b.WriteString("fragment F0 on Query { __typename }\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "{ ...F%d }", n)
	return b.String()
}

func bombs(tb testing.TB, srv *apitest.Server) []bomb {
	tb.Helper()
	_, list := records(tb, srv, companyA)
	inv := list.Inventories.Edges[0].Node
	material := inv.Environments[0].Items[0].Material.ID
	item := inv.Environments[0].Items[0].ID
	inventoryIDs := make([]string, 0, 100)
	for _, e := range list.Inventories.Edges {
		inventoryIDs = append(inventoryIDs, e.Node.ID)
	}
	for len(inventoryIDs) < 100 {
		inventoryIDs = append(inventoryIDs, inventoryIDs...)
	}
	inventoryIDs = inventoryIDs[:100]
	aliases := func(n int, field string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: %s", i, field)
		}
		return b.String() + " }"
	}
	materialCycle := func(first string, depth int) string {
		return `query($id: ID!) { node(id: $id) { ... on Material { ` +
			repeat(`items`+first+` { edges { node { material { `, "id", ` } } } }`, depth) + ` } } }`
	}
	return []bomb{
		// The three requests of the issue.
		{name: "material cycle, as first sent", company: companyA, want: "GRAPHQL_VALIDATION_FAILED",
			query: `query($id: ID!) { node(id: $id) { ... on Material { items { material { items { material { items { id } } } } } } } }`,
			vars:  map[string]any{"id": material}},
		{name: "fragment fan-out F26", query: fanOut(26), want: querylimits.CodeQueryTooLarge},
		{name: "fragment fan-out F40", query: fanOut(40), want: querylimits.CodeQueryTooLarge},
		{name: "50,000 __typename", query: "{" + strings.Repeat(" __typename", 50_000) + " }", want: querylimits.CodeQueryTooLarge},

		// Their cousins: cycles through every back edge, at the largest sizes.
		{name: "material cycle, first 100", company: companyA, query: materialCycle("(first: 100)", 3),
			vars: map[string]any{"id": material}, want: querylimits.CodeTooComplex},
		{name: "material cycle, first 50, 4 deep", company: companyA, query: materialCycle("(first: 50)", 4),
			vars: map[string]any{"id": material}, want: querylimits.CodeTooComplex},
		{name: "material cycle, default sizes, 2 deep", company: companyA, query: materialCycle("", 2),
			vars: map[string]any{"id": material}},
		{name: "property cycle", company: companyA, want: querylimits.CodeTooComplex,
			query: `{ properties(first: 100) { edges { node { ` +
				repeat(`inventories(first: 100) { edges { node { property { `, "id", ` } } } }`, 3) + ` } } } }`},
		{name: "inventory cycle", company: companyA, want: querylimits.CodeTooComplex,
			query: `{ inventories(first: 100) { edges { node { ` +
				repeat(`environments { inventory { `, "id", ` } }`, 5) + ` } } } }`},
		{name: "environment cycle", company: companyA, want: querylimits.CodeTooComplex,
			query: `{ inventories(first: 100) { edges { node { environments { ` +
				repeat(`items { environment { `, "id", ` } }`, 5) + ` } } } } }`},
		{name: "photo cycle", company: companyA, want: querylimits.CodeTooComplex,
			query: `query($id: ID!) { node(id: $id) { ... on Item { ` +
				repeat(`photos { item { `, "id", ` } }`, 6) + ` } } }`, vars: map[string]any{"id": item}},
		{name: "aliases × lists", company: companyA, want: querylimits.CodeTooComplex,
			query: aliases(60, `inventories(first: 100) { edges { node { environments { items { id photos { id } } } } } }`)},
		{name: "aliases × pages", company: companyA, want: querylimits.CodeTooComplex,
			query: aliases(60, `inventoryPage(pageSize: 100) { data { environments { items { id name } } } }`)},
		{name: "nodes of 100 ids × nested lists", company: companyA, want: querylimits.CodeTooComplex,
			query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Inventory { environments { id items { id name photos { id url } } } } } }`,
			vars:  map[string]any{"ids": inventoryIDs}},
		{name: "nodes of 100 ids, one whole tree each", company: companyA,
			query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Inventory { environments { items { photos { id } } } } } }`,
			vars:  map[string]any{"ids": inventoryIDs}},
		{name: "depth", company: companyA, want: querylimits.CodeQueryTooDeep,
			query: `{ inventories(first: 1) { edges { node { ` + repeat(`property { inventories(first: 1) { edges { node { `, "id", ` } } } }`, 5) + ` } } } }`},
		{name: "a list over its maximum", company: companyA, want: "INVALID_ARGUMENT",
			query: `{ inventories(first: 1) { edges { node { environments(first: 61) { id } } } } }`},
		// A size of null or 0 does not make a list free: null is refused (gqlgen
		// would read 0, entgql's loading no limit), and a list loaded whole is
		// priced whole whatever it returns.
		{name: "a null size on a connection", company: companyA, want: "INVALID_ARGUMENT",
			query: `query($id: ID!, $n: Int) { node(id: $id) { ... on Material { items(first: $n) { edges { node { id material {
				items(first: $n) { edges { node { id } } } } } } } } } }`,
			vars: map[string]any{"id": material, "n": nil}},
		{name: "a null size on a list", company: companyA, want: "INVALID_ARGUMENT",
			query: `query($n: Int) { inventories(first: 1) { edges { node { environments(first: $n) { id } } } } }`,
			vars:  map[string]any{"n": nil}},
		{name: "a wide selection set", company: companyA, want: querylimits.CodeQueryTooLarge,
			query: `{ inventories(first: 1) { edges { node { ` + fields("a", 201) + ` } } } }`},
		{name: "a large fragment spread once", company: companyA,
			query: `{ inventories(first: 1) { edges { node { ...F } } } } fragment F on Inventory { ` +
				repeatN(11, func(i int) string { return fmt.Sprintf("e%d: environments { %s } ", i, fields("f", 99)) }) + `}`},
		{name: "aliases × lists asked for 0", company: companyA, want: querylimits.CodeTooComplex,
			query: aliases(60, `inventories(first: 100) { edges { node { environments(first: 0) { items { id photos { id } } } } } }`)},

		// Issue 23's: a price that counted fields, not bytes nor the database's work.
		{name: "nodes of 100 materials × 40 aliases of 1,000 bytes", company: companyA, want: querylimits.CodeQueryTooLarge,
			query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Material { items(first: 100) { edges { node { ` +
				repeatN(40, func(i int) string { return fmt.Sprintf("%s%d: description ", strings.Repeat("a", 1_000), i) }) + `} } } } } }`,
			vars: map[string]any{"ids": repeated(material, 100)}},
		{name: "100 text searches across an edge, counted", company: companyA, want: querylimits.CodeTooComplex,
			query: `{ inventories(where: {or: [` + repeatN(100, func(i int) string {
				return fmt.Sprintf(`{hasPropertyWith: {addressContainsFold: "calle %d"}} `, i)
			}) + `]}) { totalCount } }`},
		{name: "160 filtered counts under 12 materials", company: companyA, want: querylimits.CodeTooComplex,
			query: `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Material { ` + repeatN(160, func(i int) string {
				return fmt.Sprintf(`c%d: items(where: {rating: %d}) { totalCount } `, i, i%5+1)
			}) + `} } }`,
			vars: map[string]any{"ids": repeated(material, 12)}},
		{name: "50 repair lists", company: companyA, want: querylimits.CodeTooComplex,
			query: aliases(50, `repairs(first: 100) { edges { node { id } } }`)},
		{name: "100 deep repair pages", company: companyA, want: querylimits.CodeTooComplex,
			query: "{" + repeatN(100, func(i int) string { return fmt.Sprintf(" p%d: repairPage(page: %d) { data { id } }", i, 1000+i) }) + " }"},
	}
}

// repeated is n copies of s.
func repeated(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestQueryBombsAreRefusedBeforeTheyCostAnything sends each bomb and checks
// that it is refused with the code of the limit it passed, before a single
// SQL statement, or answered; and that none makes the server allocate more
// than 64 MB. How fast each is refused is measured by BenchmarkQueryBombs.
func TestQueryBombsAreRefusedBeforeTheyCostAnything(t *testing.T) {
	var counter testdb.Counter
	srv, _ := demo(t, counter.Option())
	for _, b := range bombs(t, srv) {
		t.Run(b.name, func(t *testing.T) {
			counter.Reset()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := srv.GraphQL(t, b.company, b.query, b.vars)
			runtime.ReadMemStats(&after)

			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 64<<20 {
				t.Errorf("the request allocated %d MB, want under 64 MB", allocated>>20)
			}
			if b.want == "" {
				if len(res.Errors) > 0 {
					t.Fatalf("got errors %+v, want an answer", res.Errors[0])
				}
				return
			}
			if len(res.Errors) != 1 || res.Errors[0].Code() != b.want {
				raw, _ := json.Marshal(res.Errors)
				t.Fatalf("got %.300s, want one error %s", raw, b.want)
			}
			if limit, ok := res.Errors[0].Extensions["limit"]; ok && !strings.Contains(res.Errors[0].Message, fmt.Sprint(limit)) {
				t.Errorf("message %q does not name the limit %v", res.Errors[0].Message, limit)
			}
			if n := counter.Count(); n > 0 {
				t.Errorf("refused after %d SQL statements, want none:\n%s", n, counter.Statements())
			}
		})
	}
}

func BenchmarkQueryBombs(b *testing.B) {
	srv, _ := demo(b)
	for _, bomb := range bombs(b, srv) {
		b.Run(strings.ReplaceAll(bomb.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				srv.GraphQL(b, bomb.company, bomb.query, bomb.vars)
			}
		})
	}
}
