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

// A connection's page carries its totalCount: the count is a subquery of
// the page's statement, and a statement of its own only where the page
// returns no row to carry it (a page past the end) or none is asked
// (totalCount without edges). pageInfo without totalCount is told by the
// page's rows alone, counting nothing. A connection over all of the
// company's inventories reads the count off the company's tally, and counts
// no row; a filtered one counts its rows.
func TestTotalCountIsCountedInThePagesStatement(t *testing.T) {
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
	var unsignedOnes struct {
		Inventories struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	srv.MustData(t, companyA, `{ inventories(first: 10, where: {isSigned: false}) { edges { node { id } } } }`, nil, &unsignedOnes)
	unsigned := len(unsignedOnes.Inventories.Edges)
	if unsigned < 2 {
		t.Fatalf("%d unsigned inventories: a page of one of them must have more after it", unsigned)
	}
	var last struct {
		Inventories struct{ PageInfo struct{ EndCursor string } }
	}
	srv.MustData(t, companyA, `{ inventories(last: 1) { pageInfo { endCursor } } }`, nil, &last)
	for _, c := range []struct {
		name, args, selection string
		// inPage: the page's statement counts; apart: a statement of its own
		// does; tallied: the count is read off the company's tally.
		inPage, apart, tallied bool
		wantTotal              int
	}{
		{"a first page with room to spare", "first: 10", "totalCount edges { node { id } }", true, false, true, total},
		{"a first page exactly full", "first: 6", "totalCount edges { node { id } }", true, false, true, total},
		{"a first page with more after it", "first: 5", "totalCount edges { node { id } }", true, false, true, total},
		{"a last page with room to spare", "last: 10", "totalCount edges { node { id } }", true, false, true, total},
		{"a page after a cursor", fmt.Sprintf("first: 10, after: %q", all.Inventories.PageInfo.EndCursor), "totalCount edges { node { id } }", true, false, true, total},
		{"a page past the end", fmt.Sprintf("first: 10, after: %q", last.Inventories.PageInfo.EndCursor), "totalCount edges { node { id } }", true, true, true, total},
		{"pageInfo without totalCount", "first: 2", "pageInfo { hasNextPage endCursor } edges { node { id } }", false, false, false, -1},
		{"totalCount without edges", "first: 2", "totalCount", false, true, true, total},
		{"a filtered first page", "first: 10, where: {isSigned: true}", "totalCount edges { node { id isSigned } }", true, false, false, -1},
		{"a filtered page with more after it", "first: 1, where: {isSigned: false}", "totalCount edges { node { id isSigned } }", true, false, false, -2},
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
			statements := counter.Statements()
			inPage := strings.Contains(statements, "page_total_count")
			apart := false
			for _, s := range strings.Split(statements, "\n") {
				apart = apart || strings.HasPrefix(strings.ToUpper(s), "SELECT COUNT(") ||
					strings.HasPrefix(s, "SELECT CAST(COALESCE(SUM(")
			}
			tallied := strings.Contains(statements, "company_tallies")
			counted := strings.Contains(strings.ToUpper(statements), "COUNT(")
			if inPage != c.inPage || apart != c.apart || tallied != c.tallied || counted != ((c.inPage || c.apart) && !c.tallied) {
				t.Errorf("counted in the page: %t, apart: %t, off the tally: %t, rows counted: %t; want %t, %t, %t and %t:\n%s",
					inPage, apart, tallied, counted, c.inPage, c.apart, c.tallied, (c.inPage || c.apart) && !c.tallied, statements)
			}
			want := c.wantTotal
			if want == -1 && strings.Contains(c.selection, "totalCount") {
				want = len(got.Inventories.Edges) // the whole filtered set fits the page
			}
			if want == -2 {
				want = unsigned
			}
			if want >= 0 && got.Inventories.TotalCount != want {
				t.Errorf("totalCount %d, want %d", got.Inventories.TotalCount, want)
			}
		})
	}
}
