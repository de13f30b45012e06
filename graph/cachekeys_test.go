package graph_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/compare"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// What a normalized cache (Apollo Client's InMemoryCache, urql's graphcache)
// needs without configuration: every object of a comparison has an id, the
// same in every answer and different between objects of a type; and the
// schema clients read (introspection) declares none of gqlgen's own
// directives.
func TestComparisonsHaveStableIDsAndTheSchemaNoGoDirectives(t *testing.T) {
	srv, st := demo(t)
	from, to, ok, err := compare.FirstPair(tenant.WithCompany(context.Background(), uuid.MustParse(companyA)), st.Client)
	if err != nil || !ok {
		t.Fatalf("a pair to compare: %v, %v", ok, err)
	}
	const query = `query($from: ID!, $to: ID!) { inventoryComparison(from: $from, to: $to) {
		id summary { id } environments { id items { id fromPhotos { id } toPhotos { id } } } } }`
	type object struct{ ID string }
	type answer struct {
		InventoryComparison struct {
			ID           string
			Summary      object
			Environments []struct {
				ID    string
				Items []struct {
					ID                   string
					FromPhotos, ToPhotos []object
				}
			}
		}
	}
	ids := func() map[string][]string { // by type
		var a answer
		srv.MustData(t, companyA, query, map[string]any{"from": from, "to": to}, &a)
		c := a.InventoryComparison
		byType := map[string][]string{"InventoryComparison": {c.ID}, "ComparisonSummary": {c.Summary.ID}}
		for _, e := range c.Environments {
			byType["EnvironmentComparison"] = append(byType["EnvironmentComparison"], e.ID)
			for _, it := range e.Items {
				byType["ItemComparison"] = append(byType["ItemComparison"], it.ID)
				for _, p := range append(it.FromPhotos, it.ToPhotos...) {
					byType["ComparedPhoto"] = append(byType["ComparedPhoto"], p.ID)
				}
			}
		}
		return byType
	}
	first, again := ids(), ids()
	for typ, list := range first {
		if !slices.Equal(list, again[typ]) {
			t.Errorf("%s: ids %v, then %v: want the same in every answer", typ, list, again[typ])
		}
		if slices.Contains(list, "") || len(slices.Compact(slices.Sorted(slices.Values(list)))) != len(list) {
			t.Errorf("%s: ids %v, want one each, none empty", typ, list)
		}
	}
	if len(first["ItemComparison"]) == 0 || len(first["ComparedPhoto"]) == 0 {
		t.Fatalf("the comparison has no items or no photos: %v", first)
	}
	// Another pair, another id.
	var other answer
	srv.MustData(t, companyA, `query($from: ID!, $to: ID!) { inventoryComparison(from: $from, to: $to) { id } }`,
		map[string]any{"from": to, "to": from}, &other)
	if other.InventoryComparison.ID == first["InventoryComparison"][0] {
		t.Errorf("the comparison the other way round has the same id %s", other.InventoryComparison.ID)
	}

	var schema struct {
		Schema struct{ Directives []struct{ Name string } } `json:"__schema"`
	}
	srv.MustData(t, companyA, `{ __schema { directives { name } } }`, nil, &schema)
	var names []string
	for _, d := range schema.Schema.Directives {
		names = append(names, d.Name)
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "go") }) || !slices.Contains(names, "listSize") || !slices.Contains(names, "include") {
		t.Errorf("the introspected directives: %v; want include, listSize and the others, none of gqlgen's go… ones", names)
	}
}
