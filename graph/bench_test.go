package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The queries of the PostGraphile comparison (bench/peers): the nested tree
// of the first inventories of a company, and a flat page with its count.
const (
	nestedTreeQuery = `query Nested($first: Int!, $after: Cursor) {
  inventories(first: $first, after: $after, orderBy: {field: CREATED_AT, direction: ASC}) {
    edges { node {
      id createdAt rentalPrice isSigned
      property { id address city }
      environments { id name level
        items { id name rating toRepair material { id name } photos { id storageReference } } }
    } }
  }
}`
	flatPageQuery = `query Flat($first: Int!) {
  inventories(first: $first, orderBy: {field: CREATED_AT, direction: ASC}) {
    totalCount
    edges { node { id inventoryType rentalPrice currency isSigned createdAt signatureDate } }
  }
}`
)

// BenchmarkNestedTree measures, over real HTTP on the demo data, (a) the
// nested tree of 3 inventories (about 70 items with their materials and
// photos), (b) of 20, (c) a flat page of 20 with its count, and the IDE's
// example query, with the tree cache (kept: the signed trees come from it
// after the first request), with a cache too small to hold the trees it is
// asked for again (churning: every tree read, kept and soon evicted, the
// cost of the cache when keys rotate over more than it holds) and without
// (plain). The database is SQLite, or
// PostgreSQL when TEST_DATABASE_URL is set. bench/peers compares the same
// queries with PostGraphile 5.
func BenchmarkNestedTree(b *testing.B) {
	st := testdb.DemoRecords.Open(b)
	for _, cache := range []struct {
		name  string
		bytes int64
	}{{"kept", 0}, {"churning", 256 << 10}, {"plain", -1}} {
		b.Run(cache.name, func(b *testing.B) {
			benchNestedTree(b, apitest.NewServerWith(b, st, server.Options{Files: apitest.Files(b), TreeCacheBytes: cache.bytes}))
		})
	}
}

func benchNestedTree(b *testing.B, srv *apitest.Server) {
	for _, bench := range []struct {
		name, query string
		first       int
	}{
		{"a_nested_3", nestedTreeQuery, 3},
		{"b_nested_20", nestedTreeQuery, 20},
		{"c_flat_20", flatPageQuery, 20},
		{"ide_example", ide.ExampleQuery, 0},
	} {
		b.Run(bench.name, func(b *testing.B) {
			vars := map[string]any{"first": bench.first}
			if res := srv.GraphQL(b, companyA, bench.query, vars); len(res.Errors) > 0 {
				b.Fatal(res.Errors)
			}
			body, _ := json.Marshal(map[string]any{"query": bench.query, "variables": vars})
			b.ReportAllocs()
			for b.Loop() {
				post(b, srv.URL+"/graphql", body)
			}
		})
	}
	// (a) over every page of the company, of 1 to 8 inventories: trees of
	// every size rather than one.
	b.Run("a_nested_every_page", func(b *testing.B) {
		var bodies [][]byte
		var after *string
		for {
			vars := map[string]any{"first": 1 + len(bodies)%8, "after": after}
			var page struct {
				Inventories struct {
					PageInfo struct{ EndCursor *string } `json:"pageInfo"`
				} `json:"inventories"`
			}
			srv.MustData(b, companyA, `query($first: Int!, $after: Cursor) {
				inventories(first: $first, after: $after, orderBy: {field: CREATED_AT, direction: ASC}) { pageInfo { endCursor } } }`, vars, &page)
			body, _ := json.Marshal(map[string]any{"query": nestedTreeQuery, "variables": vars})
			bodies = append(bodies, body)
			if after = page.Inventories.PageInfo.EndCursor; after == nil {
				break
			}
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			post(b, srv.URL+"/graphql", bodies[i%len(bodies)])
			i++
		}
	})
}

// post sends a GraphQL request and reads its answer without decoding it, so
// that a benchmark measures the server, not the client.
func post(b *testing.B, url string, body []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Company-Id", companyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, res.Body); err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("HTTP %d, %v", res.StatusCode, err)
	}
	res.Body.Close()
}

// maxNestedTreeAllocs bounds the allocations of query (a), the nested tree
// of 3 inventories (about 70 items), over HTTP: server and test client
// together. gqlgen's own executor took 23,000.
const maxNestedTreeAllocs = 8_000

// TestNestedTreeAllocations runs query (a) as a benchmark, on SQLite or
// PostgreSQL, and fails above maxNestedTreeAllocs allocations per request.
// It counts allocations, which do not depend on the machine's load; how
// fast the request is, BenchmarkNestedTree and bench/peers measure.
func TestNestedTreeAllocations(t *testing.T) {
	// Without the tree cache: the allocations of reading the trees.
	srv := apitest.NewServerWith(t, testdb.DemoRecords.Open(t), server.Options{Files: apitest.Files(t), TreeCacheBytes: -1})
	vars := map[string]any{"first": 3}
	if res := srv.GraphQL(t, companyA, nestedTreeQuery, vars); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	body, _ := json.Marshal(map[string]any{"query": nestedTreeQuery, "variables": vars})
	result := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			post(b, srv.URL+"/graphql", body)
		}
	})
	if result.N == 0 {
		t.Fatal("the benchmark did not run")
	}
	if allocs := result.AllocsPerOp(); allocs > maxNestedTreeAllocs {
		t.Errorf("query (a): %d allocations a request, want at most %d", allocs, maxNestedTreeAllocs)
	}
	t.Logf("query (a): %d allocations, %d bytes a request", result.AllocsPerOp(), result.AllocedBytesPerOp())
}
