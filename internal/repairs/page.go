package repairs

import (
	"context"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/paging"
)

// Page is the page of first items of the list after the cursor's item (from
// the start without one), as a Relay connection. entgql's pager keysets on
// one column of the item; the list's order reads its property's and
// room's, so its pages are read here: the cursor names the last item read
// (entgql's id-only form), whose place in the list is read again, and the
// page holds the items after that place. An item stays in the database once
// its inventory is signed, so its place can always be read; a cursor naming
// no item of the company is refused.
//
// Like entgql's pager, it counts the list only when totalCount is asked, and
// reads the page when edges or pageInfo are (so that a client paging with
// pageInfo alone has its cursors), eager-loading what the nodes ask for.
func Page(ctx context.Context, client *ent.Client, f *Filter, cursor *ent.Cursor, first *int) (*ent.ItemConnection, error) {
	n := paging.DefaultPageSize
	if first != nil {
		n = *first
	}
	if n < 0 {
		return nil, apperr.InvalidField("first", "must be 0 or more, got %d", n)
	}
	q := Query(client, f)
	conn := &ent.ItemConnection{Edges: []*ent.ItemEdge{}}
	if paging.Selected(ctx, "totalCount") {
		total, err := q.Clone().Count(ctx)
		if err != nil {
			return nil, err
		}
		conn.TotalCount = total
	}
	conn.PageInfo.HasPreviousPage = cursor != nil
	if n == 0 || !paging.Selected(ctx, "edges") && !paging.Selected(ctx, "pageInfo") {
		return conn, nil
	}
	if cursor != nil {
		last, err := client.Item.Query().Where(item.ID(cursor.ID)).
			WithEnvironment(func(q *ent.EnvironmentQuery) {
				q.WithInventory(func(q *ent.InventoryQuery) { q.WithProperty() })
			}).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apperr.InvalidField("after", "is not a cursor this API gave out")
		}
		if err != nil {
			return nil, err
		}
		q.Where(after(last))
	}
	if nodeCtx, ok := paging.NodeContext(ctx); ok {
		var err error
		if q, err = q.CollectFields(nodeCtx); err != nil {
			return nil, err
		}
	}
	nodes, err := q.Limit(n + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	if len(nodes) > n {
		conn.PageInfo.HasNextPage = true
		nodes = nodes[:n]
	}
	conn.Edges = make([]*ent.ItemEdge, len(nodes))
	for i, node := range nodes {
		conn.Edges[i] = &ent.ItemEdge{Node: node, Cursor: ent.Cursor{ID: node.ID}}
	}
	if len(conn.Edges) > 0 {
		conn.PageInfo.StartCursor = &conn.Edges[0].Cursor
		conn.PageInfo.EndCursor = &conn.Edges[len(conn.Edges)-1].Cursor
	}
	return conn, nil
}
