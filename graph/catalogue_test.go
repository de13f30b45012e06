package graph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// TestMaterialsAreReadOnceThenKept: an item's material is read from the
// database the first time it is seen, then from the catalogue cache; a
// material selected with its own items is still read; a material made after
// the cache was filled is found.
func TestMaterialsAreReadOnceThenKept(t *testing.T) {
	var counter testdb.Counter
	st := testdb.DemoRecords.Open(t, counter.Option())
	srv := apitest.NewServer(t, st, nil)
	ctx := tenant.Unrestricted(context.Background(), "test: fixtures")
	it, err := st.Client.Item.Query().Where(item.HasEnvironmentWith(environment.HasInventoryWith(
		inventory.IsSigned(false), inventory.CompanyID(datagen.DemoCompanies[0])))).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const query = `query($id: ID!) { node(id: $id) { ... on Item { material { id name } } } }`
	type answer struct {
		Node struct {
			Material struct{ ID, Name string }
		}
	}
	materialReads := func() int {
		n := 0
		for _, s := range strings.Split(counter.Statements(), "\n") {
			if strings.Contains(s, "FROM `materials`") || strings.Contains(s, `FROM "materials"`) {
				n++
			}
		}
		return n
	}
	var first, second answer
	counter.Reset()
	srv.MustData(t, companyA, query, map[string]any{"id": it.ID}, &first)
	if n := materialReads(); n != 1 {
		t.Fatalf("first request: %d reads of materials, want 1:\n%s", n, counter.Statements())
	}
	counter.Reset()
	srv.MustData(t, companyA, query, map[string]any{"id": it.ID}, &second)
	if n := materialReads(); n != 0 || second != first || first.Node.Material.Name == "" {
		t.Fatalf("second request: %d reads of materials, want 0; %+v, want %+v:\n%s", n, second, first, counter.Statements())
	}

	counter.Reset()
	res := srv.GraphQL(t, companyA, `query($id: ID!) { node(id: $id) { ... on Item { material { name items(first: 1) { totalCount } } } } }`,
		map[string]any{"id": it.ID})
	if len(res.Errors) > 0 || materialReads() == 0 || !strings.Contains(string(res.Data), `"totalCount":`) {
		t.Fatalf("a material with its items: %s %v, reads of materials:\n%s", res.Data, res.Errors, counter.Statements())
	}

	made, err := st.Client.Material.Create().SetName("Material made after the cache").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Client.Item.UpdateOneID(it.ID).SetMaterialID(made.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var third answer
	srv.MustData(t, companyA, query, map[string]any{"id": it.ID}, &third)
	if third.Node.Material.ID != made.ID.String() || third.Node.Material.Name != made.Name {
		t.Fatalf("after the item's material changed: %+v, want %s %q", third, made.ID, made.Name)
	}
}
