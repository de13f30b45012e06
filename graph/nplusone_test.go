package graph_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The example query's statements: inventories, then one each for
// properties, environments, items and photos; and for materials the first
// time each is seen (the catalogue cache keeps them after that). Its first
// page of 3 holds every inventory of these sets, so its totalCount is the
// page's (TestTotalCountIsCountedOnlyWhereThePageCannotTellIt).
const nestedQueryStatements = 5

func TestNestedQueryCostsTheSameStatementsForAnySize(t *testing.T) {
	sizes := []datagen.Size{
		{Companies: 1, PropertiesPerCompany: 1, InventoriesPerProperty: 1, MinEnvironments: 1, MaxEnvironments: 1, MinItems: 1, MaxItems: 1, MaxPhotos: 1},
		{Companies: 1, PropertiesPerCompany: 3, InventoriesPerProperty: 1, MinEnvironments: 10, MaxEnvironments: 10, MinItems: 20, MaxItems: 20, MaxPhotos: 3},
	}
	for _, size := range sizes {
		items := size.PropertiesPerCompany * size.MinEnvironments * size.MinItems
		t.Run(fmt.Sprintf("%d items", items), func(t *testing.T) {
			var counter testdb.Counter
			st := testdb.Open(t, counter.Option())
			stats, err := datagen.Load(context.Background(), st.Client, nil, 7, size)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Items != items {
				t.Fatalf("loaded %d items, want %d", stats.Items, items)
			}
			// Without the tree cache, which would answer the second request's
			// signed trees without the database (TestAKeptTreeSkipsTheDatabase).
			srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), TreeCacheBytes: -1})

			counter.Reset()
			var first, got connection
			srv.MustData(t, companyA, ide.ExampleQuery, nil, &first)
			if n := counter.Count(); n != nestedQueryStatements+1 {
				t.Errorf("statements of the first request: got %d, want %d:\n%s", n, nestedQueryStatements+1, counter.Statements())
			}
			counter.Reset()
			srv.MustData(t, companyA, ide.ExampleQuery, nil, &got)
			if n := counter.Count(); n != nestedQueryStatements {
				t.Errorf("statements: got %d, want %d:\n%s", n, nestedQueryStatements, counter.Statements())
			}
			if !reflect.DeepEqual(first, got) {
				t.Error("the answer with materials from the catalogue differs from the first")
			}
			var seen int
			for _, e := range got.Inventories.Edges {
				for _, env := range e.Node.Environments {
					seen += len(env.Items)
				}
			}
			if seen != items {
				t.Errorf("items returned: got %d, want %d", seen, items)
			}
		})
	}
}

func TestNodeLookupCostsOneStatementPlusOnePerType(t *testing.T) {
	var counter testdb.Counter
	st := testdb.DemoRecords.Open(t, counter.Option())
	srv := apitest.NewServer(t, st, nil)
	_, list := records(t, srv, companyA)
	a, b := list.Inventories.Edges[0].Node, list.Inventories.Edges[1].Node
	ids := []string{a.ID, b.ID, a.Property.ID, a.Environments[0].Items[0].ID}

	counter.Reset()
	var got struct {
		Nodes []struct {
			Typename string `json:"__typename"`
			ID       string `json:"id"`
		} `json:"nodes"`
	}
	srv.MustData(t, companyA, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, map[string]any{"ids": ids}, &got)
	// One lookup of the tables, then one load each for inventories, properties and items.
	if n := counter.Count(); n != 4 {
		t.Errorf("statements: got %d, want 4:\n%s", n, counter.Statements())
	}
	wantTypes := []string{"Inventory", "Inventory", "Property", "Item"}
	for i, n := range got.Nodes {
		if n.ID != ids[i] || n.Typename != wantTypes[i] {
			t.Errorf("node %d: got %s %s, want %s %s", i, n.Typename, n.ID, wantTypes[i], ids[i])
		}
	}
}

// A page fetches one inventory past its end, to tell whether another page
// follows; the trees of the page's inventories are loaded, not that one's.
func TestAPageLoadsTheTreesOfItsOwnRowsOnly(t *testing.T) {
	var counter testdb.Counter
	srv, _ := demo(t, counter.Option())
	for _, last := range []bool{false, true} {
		counter.Reset()
		arg := "first"
		if last {
			arg = "last"
		}
		var got struct {
			Inventories struct {
				PageInfo struct{ HasNextPage, HasPreviousPage bool } `json:"pageInfo"`
				Edges    []struct {
					Node struct {
						Environments []struct{ ID string } `json:"environments"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"inventories"`
		}
		srv.MustData(t, companyA, `{ inventories(`+arg+`: 2) { pageInfo { hasNextPage hasPreviousPage } edges { node { environments { id } } } } }`, nil, &got)
		inv := got.Inventories
		if len(inv.Edges) != 2 || inv.PageInfo.HasNextPage == last || inv.PageInfo.HasPreviousPage != last {
			t.Errorf("%s: 2: got %d inventories, %+v, want 2 and another page", arg, len(inv.Edges), inv.PageInfo)
		}
		for _, e := range inv.Edges {
			if len(e.Node.Environments) == 0 {
				t.Errorf("%s: 2: an inventory of the page has no environments loaded", arg)
			}
		}
		loaded := 0
		for _, stmt := range strings.Split(counter.Statements(), "\n") {
			if strings.Contains(stmt, "FROM `environments`") || strings.Contains(stmt, `FROM "environments"`) {
				list := stmt[strings.Index(stmt, " IN (")+len(" IN ("):]
				loaded = strings.Count(list[:strings.Index(list, ")")], ",") + 1
			}
		}
		if loaded != 2 {
			t.Errorf("%s: 2: environments were loaded for %d inventories, want the page's 2:\n%s", arg, loaded, counter.Statements())
		}
	}
}
