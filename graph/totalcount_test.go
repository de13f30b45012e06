package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A connection reads its page first and counts only what its rows do not
// tell: a first page shorter than it asked is the whole count, and
// pageInfo without totalCount is told by the page's rows alone.
func TestTotalCountIsCountedOnlyWhereThePageCannotTellIt(t *testing.T) {
	var counter testdb.Counter
	st := testdb.Open(t, counter.Option())
	size := datagen.Size{Companies: 1, PropertiesPerCompany: 2, InventoriesPerProperty: 3, MinEnvironments: 1, MaxEnvironments: 1,
		MinItems: 1, MaxItems: 1, MaxPhotos: 0}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 5, size); err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServer(t, st, nil)
	var all struct {
		Inventories struct {
			TotalCount int
			PageInfo   struct{ EndCursor string }
		}
	}
	srv.MustData(t, companyA, `{ inventories(first: 1) { totalCount pageInfo { endCursor } } }`, nil, &all)
	total := all.Inventories.TotalCount
	if total != 6 {
		t.Fatalf("totalCount %d, want the 6 inventories loaded", total)
	}
	for _, c := range []struct {
		name, args, selection string
		counts                bool
		wantTotal             int
	}{
		{"a first page with room to spare", "first: 10", "totalCount edges { node { id } }", false, total},
		{"a first page exactly full", "first: 6", "totalCount edges { node { id } }", false, total},
		{"a first page with more after it", "first: 5", "totalCount edges { node { id } }", true, total},
		{"a last page with room to spare", "last: 10", "totalCount edges { node { id } }", false, total},
		{"a page after a cursor", fmt.Sprintf("first: 10, after: %q", all.Inventories.PageInfo.EndCursor), "totalCount edges { node { id } }", true, total},
		{"pageInfo without totalCount", "first: 2", "pageInfo { hasNextPage endCursor } edges { node { id } }", false, -1},
		{"totalCount without edges", "first: 2", "totalCount", true, total},
		{"a filtered first page", "first: 10, where: {isSigned: true}", "totalCount edges { node { id isSigned } }", false, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter.Reset()
			var got struct {
				Inventories struct {
					TotalCount int
					Edges      []struct{ Node struct{ ID string } }
				}
			}
			srv.MustData(t, companyA, fmt.Sprintf(`{ inventories(%s) { %s } }`, c.args, c.selection), nil, &got)
			counted := strings.Contains(strings.ToUpper(counter.Statements()), "COUNT(")
			if counted != c.counts {
				t.Errorf("counted: %t, want %t:\n%s", counted, c.counts, counter.Statements())
			}
			want := c.wantTotal
			if want == -1 && strings.Contains(c.selection, "totalCount") {
				want = len(got.Inventories.Edges) // the whole filtered set fits the page
			}
			if want >= 0 && got.Inventories.TotalCount != want {
				t.Errorf("totalCount %d, want %d", got.Inventories.TotalCount, want)
			}
		})
	}
}
