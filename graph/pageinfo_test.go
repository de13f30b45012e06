package graph_test

import (
	"encoding/json"
	"fmt"
	"maps"
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

// So it is on every nested connection (a property's inventories, a
// material's items), whether its parent is read by id or in a list of
// parents (one statement reads every parent's page): pageInfo alone gives
// the cursors and hasNextPage that the same page gives with its edges, and
// its endCursor reads the next page.
func TestNestedPagingWithPageInfoAloneGoesOn(t *testing.T) {
	srv, _ := demo(t)
	ids := idsByType(t, srv)
	for _, tt := range []struct {
		name, query string // the connection's selection is %s
		vars        map[string]any
		pages       int
		list        func(data json.RawMessage) (json.RawMessage, error)
	}{
		{"Property.inventories by id", `query($id: ID!, $after: Cursor) { node(id: $id) { ... on Property { list: inventories(first: 1, after: $after) { %s } } } }`,
			map[string]any{"id": ids["Property"]}, 3, field("node", "list")},
		{"Material.items by id", `query($id: ID!, $after: Cursor) { node(id: $id) { ... on Material { list: items(first: 2, after: $after) { %s } } } }`,
			map[string]any{"id": ids["Material"]}, 3, field("node", "list")},
		{"Property.inventories in a list", `query($after: Cursor) { properties(first: 3) { edges { node { list: inventories(first: 1, after: $after) { %s } } } } }`,
			map[string]any{}, 3, func(data json.RawMessage) (json.RawMessage, error) {
				var out struct {
					Properties struct {
						Edges []struct {
							Node struct{ List json.RawMessage }
						}
					}
				}
				err := json.Unmarshal(data, &out)
				if err != nil || len(out.Properties.Edges) == 0 {
					return nil, fmt.Errorf("no property: %s (%v)", data, err)
				}
				return out.Properties.Edges[0].Node.List, nil
			}},
	} {
		type pageInfo struct {
			StartCursor, EndCursor *string
			HasNextPage            bool
		}
		read := func(selection string, after any) (info pageInfo, edges []struct{ Cursor string }) {
			t.Helper()
			vars := maps.Clone(tt.vars)
			vars["after"] = after
			res := srv.GraphQL(t, companyA, fmt.Sprintf(tt.query, selection), vars)
			if len(res.Errors) > 0 {
				t.Fatalf("%s: %v", tt.name, res.Errors)
			}
			raw, err := tt.list(res.Data)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var list struct {
				PageInfo pageInfo
				Edges    []struct{ Cursor string }
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatal(err)
			}
			return list.PageInfo, list.Edges
		}
		var after any
		for page := 1; page <= tt.pages; page++ {
			alone, _ := read(`pageInfo { startCursor endCursor hasNextPage }`, after)
			withEdges, edges := read(`pageInfo { startCursor endCursor hasNextPage } edges { cursor }`, after)
			if len(edges) == 0 || alone.StartCursor == nil || alone.EndCursor == nil ||
				*alone.StartCursor != edges[0].Cursor || *alone.EndCursor != edges[len(edges)-1].Cursor || alone.HasNextPage != withEdges.HasNextPage {
				t.Fatalf("%s, page %d: pageInfo alone %+v; with edges %+v, edges %v: want the same cursors and hasNextPage", tt.name, page, alone, withEdges, edges)
			}
			if page < tt.pages && !alone.HasNextPage {
				t.Fatalf("%s, page %d: no next page, want %d pages", tt.name, page, tt.pages)
			}
			after = *alone.EndCursor
		}
	}
}

// field returns the object at a path of a GraphQL answer's data.
func field(path ...string) func(json.RawMessage) (json.RawMessage, error) {
	return func(data json.RawMessage) (json.RawMessage, error) {
		for _, name := range path {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(data, &obj); err != nil || obj[name] == nil {
				return nil, fmt.Errorf("no %s in %s (%v)", name, data, err)
			}
			data = obj[name]
		}
		return data, nil
	}
}
