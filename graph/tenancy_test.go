package graph_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
)

type idList struct {
	Inventories struct {
		TotalCount int `json:"totalCount"`
		Edges      []struct {
			Node struct {
				ID       string `json:"id"`
				Property struct {
					ID string `json:"id"`
				} `json:"property"`
				Environments []struct {
					ID    string `json:"id"`
					Items []struct {
						ID       string `json:"id"`
						Material struct {
							ID string `json:"id"`
						} `json:"material"`
					} `json:"items"`
				} `json:"environments"`
			} `json:"node"`
		} `json:"edges"`
	} `json:"inventories"`
}

// records lists every id a company can reach from its inventories.
func records(tb testing.TB, srv interface {
	MustData(testing.TB, string, string, map[string]any, any)
}, company string) (ids map[string]bool, l idList) {
	tb.Helper()
	srv.MustData(tb, company, `{ inventories(first: 100) { totalCount edges { node { id property { id }
		environments { id items { id material { id } } } } } } }`, nil, &l)
	ids = map[string]bool{}
	for _, e := range l.Inventories.Edges {
		ids[e.Node.ID] = true
		ids[e.Node.Property.ID] = true
		for _, env := range e.Node.Environments {
			ids[env.ID] = true
			for _, it := range env.Items {
				ids[it.ID] = true
			}
		}
	}
	return ids, l
}

func TestCompaniesNeverSeeEachOthersRecords(t *testing.T) {
	srv, _ := demo(t)
	idsA, listA := records(t, srv, companyA)
	idsB, listB := records(t, srv, companyB)

	if listA.Inventories.TotalCount != 60 || listB.Inventories.TotalCount != 60 {
		t.Fatalf("counts: got A %d, B %d, want 60 each", listA.Inventories.TotalCount, listB.Inventories.TotalCount)
	}
	for id := range idsA {
		if idsB[id] {
			t.Fatalf("record %s is visible to both companies", id)
		}
	}

	inventoryA := listA.Inventories.Edges[0].Node
	itemA := inventoryA.Environments[0].Items[0]

	t.Run("node", func(t *testing.T) {
		for _, id := range []string{inventoryA.ID, inventoryA.Property.ID, inventoryA.Environments[0].ID, itemA.ID} {
			res := srv.GraphQL(t, companyB, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
			// As for an id that does not exist: null and no error (Relay's
			// node), so nothing tells B that the id exists.
			if string(res.Data) != `{"node":null}` || len(res.Errors) != 0 {
				t.Errorf("B reading A's %s: got %s %+v, want null and no error", id, res.Data, res.Errors)
			}
			if unknown := srv.GraphQL(t, companyB, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": uuid.NewString()}); string(unknown.Data) != string(res.Data) || len(unknown.Errors) != len(res.Errors) {
				t.Errorf("B reading A's %s answers %s %+v, but an unknown id %s %+v", id, res.Data, res.Errors, unknown.Data, unknown.Errors)
			}
			var own struct{ Node struct{ ID string } }
			srv.MustData(t, companyA, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}, &own)
			if own.Node.ID != id {
				t.Errorf("A reading its own %s: got %q", id, own.Node.ID)
			}
		}
	})

	t.Run("nodes", func(t *testing.T) {
		inventoryB := listB.Inventories.Edges[0].Node.ID
		res := srv.GraphQL(t, companyB, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
			map[string]any{"ids": []string{inventoryA.ID, inventoryB}})
		want := fmt.Sprintf(`{"nodes":[null,{"id":"%s"}]}`, inventoryB)
		if string(res.Data) != want || len(res.Errors) != 0 {
			t.Errorf("got %s %+v, want %s and no error", res.Data, res.Errors, want)
		}
	})

	t.Run("edges through the shared material catalogue", func(t *testing.T) {
		var got struct {
			Node struct {
				Items itemConnection `json:"items"`
			} `json:"node"`
		}
		srv.MustData(t, companyB, `query($id: ID!) { node(id: $id) { ... on Material { items(first: 100) { totalCount edges { node { id } } } } } }`,
			map[string]any{"id": itemA.Material.ID}, &got)
		items := got.Node.Items
		if len(items.Edges) == 0 || len(items.Edges) != min(items.TotalCount, 100) {
			t.Fatalf("B sees %d of %d items of material %s: want its own", len(items.Edges), items.TotalCount, itemA.Material.ID)
		}
		for _, it := range items.Edges {
			if !idsB[it.Node.ID] {
				t.Errorf("material %s leads B to item %s, which is not B's", itemA.Material.ID, it.Node.ID)
			}
		}
	})

	t.Run("page counts and filters", func(t *testing.T) {
		var got struct {
			InventoryPage struct{ TotalRecords int } `json:"inventoryPage"`
			PropertyPage  struct{ TotalRecords int } `json:"propertyPage"`
		}
		srv.MustData(t, companyB, `query($p: ID!) { inventoryPage(where: {propertyID: $p}) { totalRecords } propertyPage { totalRecords } }`,
			map[string]any{"p": inventoryA.Property.ID}, &got)
		if got.InventoryPage.TotalRecords != 0 || got.PropertyPage.TotalRecords != 20 {
			t.Errorf("B filtering by A's property: got %+v, want 0 inventories and B's 20 properties", got)
		}
	})

	t.Run("back up the tree", func(t *testing.T) {
		q := `query($id: ID!) { node(id: $id) { ... on Item { environment { inventory { property { id } } } } } }`
		var up struct {
			Node struct {
				Environment struct {
					Inventory struct {
						Property struct{ ID string } `json:"property"`
					} `json:"inventory"`
				} `json:"environment"`
			} `json:"node"`
		}
		srv.MustData(t, companyA, q, map[string]any{"id": itemA.ID}, &up)
		if got := up.Node.Environment.Inventory.Property.ID; got != inventoryA.Property.ID {
			t.Errorf("item to property: got %q, want %q", got, inventoryA.Property.ID)
		}
		res := srv.GraphQL(t, companyB, q, map[string]any{"id": itemA.ID})
		if string(res.Data) != `{"node":null}` {
			t.Errorf("B walking up from A's item: got %s, want null", res.Data)
		}
	})
}
