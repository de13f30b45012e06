package querylimits

import (
	"github.com/vektah/gqlparser/v2/ast"
)

// What the price tests (querylimits_test, which builds the executor of
// package graph to validate their documents) read of this package.

// Price prices set, its lists read from schema, as CostCheck does but
// without a limit.
func Price(schema *ast.Schema, set ast.SelectionSet, vars map[string]any) int {
	p := pricer{lists: ReadListSizes(schema), vars: vars, limit: 1 << 30}
	return p.selections(set, 1, 0, nil)
}

const (
	PhotoDecodePrice = photoDecodePrice
	WriteRowPrice    = writeRowPrice
)

// HasCursorType reports whether cursorValues has an entry for an order field.
func HasCursorType(orderField string) bool {
	_, ok := cursorValues[orderField]
	return ok
}
