package graph_test

import (
	"encoding/json"
	"testing"
)

// A client paging with pageInfo alone (no edges) gets the page's cursors
// and whether another page follows, and can go on to the next page, on
// every root connection.
func TestPagingWithPageInfoAloneGoesOn(t *testing.T) {
	srv, _ := demo(t)
	for _, root := range []string{"inventories", "properties", "repairs"} {
		query := `query($after: Cursor) { list: ` + root + `(first: 2, after: $after) { pageInfo { startCursor endCursor hasNextPage } } }`
		var after any
		seen := map[string]bool{}
		for page := 1; page <= 3; page++ {
			var out struct {
				List struct {
					PageInfo struct {
						StartCursor, EndCursor *string
						HasNextPage            bool
					}
				}
			}
			res := srv.GraphQL(t, companyA, query, map[string]any{"after": after})
			if len(res.Errors) > 0 {
				t.Fatalf("%s page %d: %v", root, page, res.Errors)
			}
			if err := json.Unmarshal(res.Data, &out); err != nil {
				t.Fatal(err)
			}
			info := out.List.PageInfo
			if info.StartCursor == nil || info.EndCursor == nil || !info.HasNextPage || seen[*info.EndCursor] {
				t.Fatalf("%s page %d: %s; want both cursors, new ones, and a next page", root, page, res.Data)
			}
			seen[*info.EndCursor] = true
			after = *info.EndCursor
		}
	}
	// Past the end: no next page.
	var out struct {
		Properties struct{ PageInfo struct{ HasNextPage bool } }
	}
	srv.MustData(t, companyA, `{ properties(first: 100) { pageInfo { hasNextPage } } }`, nil, &out)
	if out.Properties.PageInfo.HasNextPage {
		t.Error("every property on one page: hasNextPage true, want false")
	}
}
