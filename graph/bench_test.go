package graph_test

import (
	"testing"

	"github.com/propertyrecords/inventory/internal/ide"
)

// BenchmarkNestedInventoryQuery measures the IDE's example query (three
// inventories with their property, environments, items, materials and photos)
// over real HTTP on the demo data. The database is SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set.
func BenchmarkNestedInventoryQuery(b *testing.B) {
	srv, _ := demo(b)
	var got connection
	srv.MustData(b, companyA, ide.ExampleQuery, nil, &got)
	if len(got.Inventories.Edges) != 3 {
		b.Fatalf("got %d inventories, want 3", len(got.Inventories.Edges))
	}
	b.ReportAllocs()
	for b.Loop() {
		if res := srv.GraphQL(b, companyA, ide.ExampleQuery, nil); len(res.Errors) > 0 {
			b.Fatal(res.Errors)
		}
	}
}
