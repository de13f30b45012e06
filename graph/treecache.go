package graph

import (
	"context"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/treecache"
)

// keptTree is the inventory's environments field in the answer the direct
// executor writes: from the tree cache when its read pinned it there
// (graph/gqlgen.go: Cached).
func keptTree(ctx context.Context, obj *ent.Inventory, field *ast.Field) treecache.Tree {
	return treecache.Lookup(ctx, obj.ID, obj.IsSigned, obj.Version, field)
}
