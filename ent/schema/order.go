package schema

// DescendingSort gives an order field its own column for descending order.
//
// An order field reads one NOT NULL column (cursors cannot step across
// NULLs), and a column read backwards reverses every row: values that stand
// in for "none" (a sentinel) come first in one direction. Where those rows
// belong last in both directions, the field keeps a second column holding a
// sentinel from the other end, and descending orders read that one. The
// ent/template/descending_sort.tmpl template writes the order field over the
// second column, and ent/entc.go makes each pager swap it in for
// descending orders.
type DescendingSort struct {
	// Column is the field read by descending orders.
	Column string
}

// Name implements ent's schema.Annotation.
func (DescendingSort) Name() string { return "DescendingSort" }

// DefaultOrder is the order of a connection edge when the request gives no
// orderBy (entgql's pagers default to the id): ent/entc.go makes it the
// default value of the edge's orderBy argument, so the schema shows it.
type DefaultOrder struct {
	// Field and Direction are the GraphQL enum values of the order.
	Field, Direction string
}

// Name implements ent's schema.Annotation.
func (DefaultOrder) Name() string { return "DefaultOrder" }
