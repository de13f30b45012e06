// Package timeline is a property's history as events, oldest first, read
// for every property of a request in one statement: a list of properties
// asking for their timelines costs one more statement, not one per property.
package timeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/predicate"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/inventorytype"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Kind is what happened.
type Kind string

const (
	Created      Kind = "INVENTORY_CREATED"
	Updated      Kind = "INVENTORY_UPDATED"
	PhotoAdded   Kind = "PHOTO_ADDED"
	PhotoRemoved Kind = "PHOTO_REMOVED"
	AgentSigned  Kind = "AGENT_SIGNED"
	OwnerSigned  Kind = "OWNER_SIGNED"
	TenantSigned Kind = "TENANT_SIGNED"
	FullySigned  Kind = "FULLY_SIGNED"
	RemoteSigned Kind = "REMOTE_SIGNED"
	Corrected    Kind = "INVENTORY_CORRECTED"
	// SignatureRequested: a link was issued for a party to sign from
	// (requestSignature); the inventory itself did not change.
	SignatureRequested Kind = "SIGNATURE_REQUESTED"
)

// order puts events at the same moment in the order they happen.
var order = map[Kind]int{Created: 0, Updated: 1, PhotoAdded: 2, PhotoRemoved: 3, SignatureRequested: 4, AgentSigned: 5, OwnerSigned: 6,
	TenantSigned: 7, FullySigned: 8, RemoteSigned: 9, Corrected: 10}

// changes are the kinds of the writes the timeline reads from the events
// table (ent's RecordEvent), with their timeline kinds: the inventory's own
// columns keep when it was made and signed, whoever wrote it (the import
// and the generator included), but not what changed in between.
var changes = map[recordevent.Kind]Kind{
	recordevent.KindInventoryUpdated:   Updated,
	recordevent.KindPhotoAdded:         PhotoAdded,
	recordevent.KindPhotoRemoved:       PhotoRemoved,
	recordevent.KindInventoryCorrected: Corrected,
	recordevent.KindSignatureRequested: SignatureRequested,
}

// changeKinds are the keys of changes, in one order: the statement's text
// is the same every time.
var changeKinds = slices.Sorted(maps.Keys(changes))

// MarshalGQL writes the kind as its GraphQL enum value.
func (k Kind) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(k)) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *Kind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if _, ok := order[Kind(s)]; !ok {
		return apperr.Errorf(apperr.Invalid, "%v is not a TimelineEventKind", v)
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
	// ItemID and PhotoID name the photo of a photo's event; nil otherwise.
	ItemID, PhotoID *uuid.UUID
	// Version is the inventory's version after a change; nil for the
	// events read from the inventory's own columns.
	Version *int
	// By is who made a change: the credential's name, or the command.
	By *string
	// recorded is the change's record event's id: the order its writes
	// committed in, which tells apart two changes of one millisecond (the
	// precision times are kept to); 0 for the events read from the
	// inventory's own columns.
	recorded int64
}

// The bounds of a timeline: the events of a property's most recent
// inventories, and its most recent changes.
const (
	MaxInventories = 100
	MaxChanges     = 500
)

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
			inventory.FieldIsRemoteSigned, inventory.FieldAgentSignatureDate, inventory.FieldOwnerSignatureDate, inventory.FieldTenantSignatureDate,
			inventory.FieldSignatureDate).
		All(ctx)
	if err != nil {
		return nil, err
	}
	changed, err := client.RecordEvent.Query().
		Where(recordevent.PropertyIDIn(ids...), recordevent.KindIn(changeKinds...), recentChanges).
		Order(ent.Asc(recordevent.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.loaded[id] = []*Event{}
	}
	types := make(map[uuid.UUID]inventorytype.Type, len(invs))
	for _, inv := range invs {
		types[inv.ID] = inv.InventoryType
	}
	for _, ev := range changed {
		l.loaded[ev.PropertyID] = append(l.loaded[ev.PropertyID], &Event{At: ev.At.UTC(), Kind: changes[ev.Kind],
			InventoryID: ev.InventoryID, InventoryType: types[ev.InventoryID], ItemID: ev.ItemID, PhotoID: ev.PhotoID,
			Version: ev.Version, By: ev.Actor, recorded: ev.ID})
	}
	counted := map[uuid.UUID]int{}
	for _, inv := range invs { // newest first within a property
		if counted[inv.PropertyID]++; counted[inv.PropertyID] > MaxInventories {
			continue
		}
		l.loaded[inv.PropertyID] = append(l.loaded[inv.PropertyID], events(inv)...)
	}
	for _, id := range ids {
		slices.SortStableFunc(l.loaded[id], func(a, b *Event) int {
			return cmp.Or(a.At.Compare(b.At), bothRecorded(a, b), cmp.Compare(order[a.Kind], order[b.Kind]),
				cmp.Compare(a.InventoryID.String(), b.InventoryID.String()))
		})
	}
	return l.loaded[property], nil
}

// bothRecorded orders two recorded changes of one instant as they were
// written; 0 when either was read from an inventory's columns.
func bothRecorded(a, b *Event) int {
	if a.recorded == 0 || b.recorded == 0 {
		return 0
	}
	return cmp.Compare(a.recorded, b.recorded)
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
	if inv.TenantSignatureDate != nil {
		out = append(out, event(*inv.TenantSignatureDate, TenantSigned))
	}
	if inv.IsSigned && inv.SignatureDate != nil {
		out = append(out, event(*inv.SignatureDate, FullySigned))
		if inv.IsRemoteSigned {
			out = append(out, event(*inv.SignatureDate, RemoteSigned))
		}
	}
	return out
}

// recentChanges keeps a property's MaxChanges most recent events: those
// from the MaxChanges-th newest of its property on (one index range per
// property, on property_id and id). The threshold compares only events of
// one property, which is of one company: it tells nothing of another's.
var recentChanges = predicate.RecordEvent(func(s *sql.Selector) {
	t := s.TableName()
	s.Where(sql.ExprP(fmt.Sprintf(`%[1]s >= COALESCE((SELECT newer.%[2]s FROM %[3]s AS newer WHERE newer.%[4]s = %[5]s
		ORDER BY newer.%[2]s DESC LIMIT 1 OFFSET %[6]d), 0)`,
		s.C(recordevent.FieldID), recordevent.FieldID, t, recordevent.FieldPropertyID, s.C(recordevent.FieldPropertyID), MaxChanges-1)))
})
