package graph_test

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"entgo.io/contrib/entgql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/scalar"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// wantRepairs computes the repair list the long way: every inventory of the
// company read whole, the latest signed one of each property picked in Go,
// its items flagged to repair kept. Ids, in the list's order: by property
// (code, then id), room (order, then id) and item (order, those without one
// last, then name, then id), sorted here.
func wantRepairs(t *testing.T, client *ent.Client, company uuid.UUID, keep func(*ent.Inventory) bool) []string {
	t.Helper()
	ctx := tenant.WithCompany(context.Background(), company)
	invs, err := client.Inventory.Query().Where(inventory.IsSigned(true)).
		WithProperty().WithEnvironments(func(q *ent.EnvironmentQuery) { q.WithItems() }).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	latest := map[uuid.UUID]*ent.Inventory{}
	for _, inv := range invs {
		cur := latest[inv.PropertyID]
		if cur == nil || inv.SignatureDate.After(*cur.SignatureDate) ||
			inv.SignatureDate.Equal(*cur.SignatureDate) && inv.ID.String() > cur.ID.String() {
			latest[inv.PropertyID] = inv
		}
	}
	type place struct {
		inv *ent.Inventory
		env *ent.Environment
		it  *ent.Item
	}
	var list []place
	for _, inv := range latest {
		if !keep(inv) {
			continue
		}
		for _, env := range inv.Edges.Environments {
			for _, it := range env.Edges.Items {
				if it.ToRepair {
					list = append(list, place{inv, env, it})
				}
			}
		}
	}
	itemOrder := func(it *ent.Item) int {
		if it.Order == nil {
			return math.MaxInt
		}
		return *it.Order
	}
	slices.SortFunc(list, func(a, b place) int {
		return cmp.Or(
			cmp.Compare(a.inv.Edges.Property.Code, b.inv.Edges.Property.Code),
			cmp.Compare(a.inv.PropertyID.String(), b.inv.PropertyID.String()),
			cmp.Compare(a.env.Order, b.env.Order),
			cmp.Compare(a.env.ID.String(), b.env.ID.String()),
			cmp.Compare(itemOrder(a.it), itemOrder(b.it)),
			cmp.Compare(a.it.Name, b.it.Name),
			cmp.Compare(a.it.ID.String(), b.it.ID.String()))
	})
	ids := make([]string, len(list))
	for i, p := range list {
		ids[i] = p.it.ID.String()
	}
	return ids
}

type repairNode struct {
	ID          string
	ToRepair    bool
	Environment struct {
		Inventory struct {
			ID       string
			Property struct{ ID, City string }
		}
	}
}

// The repair list is the items flagged in each property's latest signed
// inventory, walked by cursor and by numbered page alike without a gap or a
// repeat, and narrowed by city, property and date as asked.
func TestRepairsAreTheLatestSignedInventoriesFlaggedItems(t *testing.T) {
	srv, st := demo(t)
	company := uuid.MustParse(companyA)
	all := wantRepairs(t, st.Client, company, func(*ent.Inventory) bool { return true })
	if len(all) < 10 {
		t.Fatalf("the demo has %d repairs: too few to page through", len(all))
	}

	walk := func(where map[string]any) (ids []string, nodes []repairNode) {
		var after any
		for range 100 {
			var page struct {
				Repairs struct {
					Edges    []struct{ Node repairNode }
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
					TotalCount int
				}
			}
			srv.MustData(t, companyA, `query($after: Cursor, $where: RepairWhereInput) {
				repairs(first: 7, after: $after, where: $where) {
					totalCount pageInfo { hasNextPage endCursor }
					edges { node { id toRepair environment { inventory { id property { id city } } } } } } }`,
				map[string]any{"after": after, "where": where}, &page)
			for _, e := range page.Repairs.Edges {
				ids, nodes = append(ids, e.Node.ID), append(nodes, e.Node)
			}
			if !page.Repairs.PageInfo.HasNextPage {
				return ids, nodes
			}
			after = page.Repairs.PageInfo.EndCursor
		}
		t.Fatal("the walk did not end")
		return nil, nil
	}
	got, nodes := walk(nil)
	if !slices.Equal(got, all) {
		t.Fatalf("by cursor: %d repairs %v\nwant %d %v", len(got), got, len(all), all)
	}
	for _, n := range nodes {
		if !n.ToRepair || n.Environment.Inventory.Property.ID == "" {
			t.Errorf("repair %+v: not flagged, or its property out of reach", n)
		}
	}

	var numbered []string
	for page := 1; ; page++ {
		var out struct {
			RepairPage struct {
				Data        []struct{ ID string }
				HasNextPage bool
			}
		}
		srv.MustData(t, companyA, `query($page: Int!) { repairPage(page: $page, pageSize: 9) { hasNextPage data { id } } }`, map[string]any{"page": page}, &out)
		for _, d := range out.RepairPage.Data {
			numbered = append(numbered, d.ID)
		}
		if !out.RepairPage.HasNextPage {
			break
		}
	}
	if !slices.Equal(numbered, all) {
		t.Errorf("by page: %d repairs, want %d", len(numbered), len(all))
	}

	city := nodes[0].Environment.Inventory.Property.City
	property := uuid.MustParse(nodes[0].Environment.Inventory.Property.ID)
	byCity, _ := walk(map[string]any{"city": strings.ToUpper(city)})
	if want := wantRepairs(t, st.Client, company, func(inv *ent.Inventory) bool { return inv.Edges.Property.City == city }); !slices.Equal(byCity, want) || len(want) == 0 {
		t.Errorf("city %q: %v, want %v", city, byCity, want)
	}
	byProperty, _ := walk(map[string]any{"propertyId": property})
	if want := wantRepairs(t, st.Client, company, func(inv *ent.Inventory) bool { return inv.PropertyID == property }); !slices.Equal(byProperty, want) || len(want) == 0 {
		t.Errorf("property %s: %v, want %v", property, byProperty, want)
	}
	since := "2025-06-01T00:00:00Z"
	bySince, _ := walk(map[string]any{"since": since})
	if want := wantRepairs(t, st.Client, company, func(inv *ent.Inventory) bool { return inv.SignatureDate.Format("2006-01-02") >= "2025-06-01" }); !slices.Equal(bySince, want) {
		t.Errorf("since %s: %d, want %d", since, len(bySince), len(want))
	}

	// A cursor names the last item read, whose place is read again: one
	// naming no item of the company (another company's, or none) is refused.
	var theirs struct {
		Repairs struct{ Edges []struct{ Cursor string } }
	}
	srv.MustData(t, companyB, `{ repairs(first: 1) { edges { cursor } } }`, nil, &theirs)
	if len(theirs.Repairs.Edges) != 1 {
		t.Fatalf("company B's repairs: %+v", theirs)
	}
	var none strings.Builder
	scalar.MarshalCursor(entgql.Cursor[uuid.UUID]{ID: uuid.New()}).MarshalGQL(&none)
	for _, cursor := range []string{theirs.Repairs.Edges[0].Cursor, strings.Trim(none.String(), `"`)} {
		res := srv.GraphQL(t, companyA, `query($after: Cursor) { repairs(first: 2, after: $after) { edges { cursor } } }`, map[string]any{"after": cursor})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "INVALID_ARGUMENT" || res.Errors[0].Extensions["field"] != "after" {
			t.Errorf("after %s: got %+v, want INVALID_ARGUMENT on after", cursor, res.Errors)
		}
	}
}
