// Package previous finds each inventory's predecessor: the same property's
// inventory created just before it, for the inventories of a whole list at
// once. A list asking every inventory for its previous one costs two
// statements, not one per inventory.
package previous

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
)

// Loader finds predecessors for one operation: the first inventory asked
// brings those of every inventory the operation has loaded so far (Seen).
type Loader struct {
	mu      sync.Mutex
	pending []*ent.Inventory
	// found holds, per selection of the previous field, each inventory's
	// predecessor loaded with that selection (nil: it has none).
	found map[*ast.Field]map[uuid.UUID]*ent.Inventory
}

type ctxKey struct{}

// WithLoader gives an operation its loader.
func WithLoader(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, &Loader{found: map[*ast.Field]map[uuid.UUID]*ent.Inventory{}})
}

// Seen notes inventories an operation loaded, whose predecessors may be asked.
func Seen(ctx context.Context, inventories []*ent.Inventory) {
	if l, _ := ctx.Value(ctxKey{}).(*Loader); l != nil {
		l.mu.Lock()
		l.pending = append(l.pending, inventories...)
		l.mu.Unlock()
	}
}

// Of returns inv's predecessor, or nil for a property's first inventory,
// loaded with what the query selects below it (ctx's field).
func Of(ctx context.Context, client *ent.Client, inv *ent.Inventory) (*ent.Inventory, error) {
	l, _ := ctx.Value(ctxKey{}).(*Loader)
	if l == nil {
		l = &Loader{found: map[*ast.Field]map[uuid.UUID]*ent.Inventory{}}
	}
	var field *ast.Field
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		field = fc.Field.Field
	}
	// The lock is not held while reading: the reads' own inventories are
	// noted (Seen) on their way back.
	l.mu.Lock()
	found := l.found[field]
	if found == nil {
		found = map[uuid.UUID]*ent.Inventory{}
		l.found[field] = found
	}
	if p, ok := found[inv.ID]; ok {
		l.mu.Unlock()
		return p, nil
	}
	// Every noted inventory not yet answered for this selection, and inv.
	asked := []*ent.Inventory{inv}
	for _, p := range l.pending {
		if _, done := found[p.ID]; !done {
			asked = append(asked, p)
		}
	}
	l.mu.Unlock()
	var properties []uuid.UUID
	for _, a := range asked {
		properties = append(properties, a.PropertyID)
	}
	slices.SortFunc(properties, func(a, b uuid.UUID) int { return cmp.Compare(a.String(), b.String()) })
	properties = slices.Compact(properties)
	// The properties' histories, light: id and creation, in order.
	history, err := client.Inventory.Query().Where(inventory.PropertyIDIn(properties...)).
		Order(ent.Asc(inventory.FieldPropertyID), ent.Asc(inventory.FieldCreatedAt), ent.Asc(inventory.FieldID)).
		Select(inventory.FieldID, inventory.FieldPropertyID, inventory.FieldCreatedAt).All(ctx)
	if err != nil {
		return nil, err
	}
	before := map[uuid.UUID]uuid.UUID{}
	for i := 1; i < len(history); i++ {
		if history[i].PropertyID == history[i-1].PropertyID {
			before[history[i].ID] = history[i-1].ID
		}
	}
	var wanted []uuid.UUID
	for _, a := range asked {
		if id, ok := before[a.ID]; ok {
			wanted = append(wanted, id)
		}
	}
	// The predecessors, with the selection below the field.
	q := client.Inventory.Query().Where(inventory.IDIn(wanted...))
	if field != nil {
		if q, err = q.CollectFields(ctx); err != nil {
			return nil, err
		}
	}
	loaded, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]*ent.Inventory{}
	for _, p := range loaded {
		byID[p.ID] = p
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range asked {
		found[a.ID] = byID[before[a.ID]] // nil when it has none
	}
	return found[inv.ID], nil
}
