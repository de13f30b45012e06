// Package timeline is a property's history as events, oldest first, read
// for every property of a request in one statement: a list of properties
// asking for their timelines costs one more statement, not one per property.
package timeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// Kind is what happened.
type Kind string

const (
	Created      Kind = "INVENTORY_CREATED"
	AgentSigned  Kind = "AGENT_SIGNED"
	OwnerSigned  Kind = "OWNER_SIGNED"
	FullySigned  Kind = "FULLY_SIGNED"
	RemoteSigned Kind = "REMOTE_SIGNED"
)

// order puts events at the same moment in the order they happen.
var order = map[Kind]int{Created: 0, AgentSigned: 1, OwnerSigned: 2, FullySigned: 3, RemoteSigned: 4}

// MarshalGQL writes the kind as its GraphQL enum value.
func (k Kind) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(k)) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *Kind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if _, ok := order[Kind(s)]; !ok {
		return fmt.Errorf("%v is not a TimelineEventKind", v)
	}
	*k = Kind(s)
	return nil
}

// Event is one event of a timeline.
type Event struct {
	At            time.Time
	Kind          Kind
	InventoryID   uuid.UUID
	InventoryType inventorytype.Type
}

// MaxInventories bounds a timeline: the events of a property's most recent
// inventories.
const MaxInventories = 100

// Loader reads timelines for one request: the first property asked for
// brings those of every property the request has loaded so far (Seen), in
// one statement.
type Loader struct {
	mu      sync.Mutex
	pending []uuid.UUID
	loaded  map[uuid.UUID][]*Event
}

type ctxKey struct{}

// WithLoader gives a request its loader.
func WithLoader(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, &Loader{loaded: map[uuid.UUID][]*Event{}})
}

// Seen notes properties a request loaded, whose timelines may be asked for.
func Seen(ctx context.Context, properties []*ent.Property) {
	l, _ := ctx.Value(ctxKey{}).(*Loader)
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range properties {
		if _, done := l.loaded[p.ID]; !done {
			l.pending = append(l.pending, p.ID)
		}
	}
}

// Of returns a property's timeline, reading it with every pending one.
func Of(ctx context.Context, client *ent.Client, property uuid.UUID) ([]*Event, error) {
	l, _ := ctx.Value(ctxKey{}).(*Loader)
	if l == nil { // outside a request's operation: one statement for one
		l = &Loader{loaded: map[uuid.UUID][]*Event{}}
	}
	// The lock is not held while reading (a read's rows are noted on their
	// way back, under it).
	l.mu.Lock()
	if events, ok := l.loaded[property]; ok {
		l.mu.Unlock()
		return events, nil
	}
	ids := append(l.pending, property)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return cmp.Compare(a.String(), b.String()) })
	ids = slices.Compact(ids)
	l.pending = nil
	l.mu.Unlock()
	invs, err := client.Inventory.Query().Where(inventory.PropertyIDIn(ids...)).
		Order(ent.Asc(inventory.FieldPropertyID), ent.Desc(inventory.FieldCreatedAt), ent.Desc(inventory.FieldID)).
		Select(inventory.FieldID, inventory.FieldPropertyID, inventory.FieldInventoryType, inventory.FieldCreatedAt, inventory.FieldIsSigned,
			inventory.FieldIsRemoteSigned, inventory.FieldAgentSignatureDate, inventory.FieldOwnerSignatureDate, inventory.FieldSignatureDate).
		All(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.loaded[id] = []*Event{}
	}
	counted := map[uuid.UUID]int{}
	for _, inv := range invs { // newest first within a property
		if counted[inv.PropertyID]++; counted[inv.PropertyID] > MaxInventories {
			continue
		}
		l.loaded[inv.PropertyID] = append(l.loaded[inv.PropertyID], events(inv)...)
	}
	for _, id := range ids {
		slices.SortFunc(l.loaded[id], func(a, b *Event) int {
			return cmp.Or(a.At.Compare(b.At), cmp.Compare(order[a.Kind], order[b.Kind]), cmp.Compare(a.InventoryID.String(), b.InventoryID.String()))
		})
	}
	return l.loaded[property], nil
}

func events(inv *ent.Inventory) []*Event {
	event := func(at time.Time, kind Kind) *Event {
		return &Event{At: at.UTC(), Kind: kind, InventoryID: inv.ID, InventoryType: inv.InventoryType}
	}
	out := []*Event{event(inv.CreatedAt, Created)}
	if inv.AgentSignatureDate != nil {
		out = append(out, event(*inv.AgentSignatureDate, AgentSigned))
	}
	if inv.OwnerSignatureDate != nil {
		out = append(out, event(*inv.OwnerSignatureDate, OwnerSigned))
	}
	if inv.IsSigned && inv.SignatureDate != nil {
		out = append(out, event(*inv.SignatureDate, FullySigned))
		if inv.IsRemoteSigned {
			out = append(out, event(*inv.SignatureDate, RemoteSigned))
		}
	}
	return out
}
