package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/records"
)

// writtenInventory answers the inventory createInventory wrote from its rows
// as written, instead of reading them back: a round trip for each level of
// the tree the selection reads. The rows are those a read returns, in its
// order (records.Made), each list given under every alias the selection
// reads it by, as the field collection's eager loads do. What else the
// selection asks of the inventory (its previous one, its property's
// inventories) is read by its resolver, under the company's policy, as in
// any answer; a selection asking the edges back up the tree (an
// environment's inventory, an item's environment) or a material's items is
// answered by a read (ok false): its resolvers would read those once a
// record, where the read's collection reads them once a level.
func writtenInventory(ctx context.Context, t *records.WrittenTree) (inv *ent.Inventory, ok bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return nil, false
	}
	op := graphql.GetOperationContext(ctx)
	rooms := collected(op, fc.Field.Selections, "Inventory", "environments")
	for _, envs := range rooms {
		if len(collected(op, envs.Selections, "Environment", "inventory")) > 0 {
			return nil, false
		}
		for _, items := range collected(op, envs.Selections, "Environment", "items") {
			if len(collected(op, items.Selections, "Item", "environment")) > 0 {
				return nil, false
			}
			for _, m := range collected(op, items.Selections, "Item", "material") {
				if len(collected(op, m.Selections, "Material", "items")) > 0 {
					return nil, false
				}
			}
		}
	}
	for _, envs := range rooms {
		t.Inventory.AppendNamedEnvironments(envs.Alias, t.Environments...)
		for _, env := range t.Environments {
			for _, items := range collected(op, envs.Selections, "Environment", "items") {
				env.AppendNamedItems(items.Alias, t.Items[env.ID]...)
				for _, it := range t.Items[env.ID] {
					for _, photos := range collected(op, items.Selections, "Item", "photos") {
						it.AppendNamedPhotos(photos.Alias) // a new item has none
					}
				}
			}
		}
	}
	return t.Inventory, true
}

// collected are the fields named name that sel selects on an object of type
// object, fragments and @skip/@include applied.
func collected(op *graphql.OperationContext, sel ast.SelectionSet, object, name string) []graphql.CollectedField {
	var out []graphql.CollectedField
	for _, f := range graphql.CollectFields(op, sel, []string{object}) {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}
