package live

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/compare"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// RepairKind is how the repair list changed (GraphQL's RepairEventKind).
type RepairKind string

const (
	// Flagged: the item is to repair in the property's new latest signed
	// inventory, and was not in the one before (or is new).
	Flagged RepairKind = "FLAGGED"
	// Repaired: the item was to repair in the property's signed inventory
	// before, and no longer is in the new one (or is gone).
	Repaired RepairKind = "REPAIRED"
	// RepairRefetch: the events asked to resume from are no longer kept.
	RepairRefetch RepairKind = "REFETCH"
)

// MarshalGQL writes the kind as its GraphQL enum value.
func (k RepairKind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *RepairKind) UnmarshalGQL(v any) error {
	switch s, _ := v.(string); RepairKind(s) {
	case Flagged, Repaired, RepairRefetch:
		*k = RepairKind(s)
		return nil
	}
	return apperr.Errorf(apperr.Invalid, "%v is not a RepairEventKind", v)
}

// RepairEvent is one change of the repair list (GraphQL's RepairEvent):
// every change a signature makes shares that signature's cursor.
type RepairEvent struct {
	Cursor string
	At     time.Time
	Kind   RepairKind
	// PropertyID and InventoryID are the property and its new latest
	// signed inventory; ItemID the item in it (for a repaired item gone
	// from it, the item in the inventory before); nil for REFETCH.
	PropertyID, InventoryID, ItemID *uuid.UUID
	City                            *string
}

// RepairEvents is the subscription repairEvents: the changes of the
// caller's company's repair list (the items to repair in each property's
// latest signed inventory) as inventories are signed, or corrected by the
// import, in the city given (any case) or all.
func (h *Hub) RepairEvents(ctx context.Context, city *string, after *string) (<-chan *RepairEvent, error) {
	return stream(ctx, h, after,
		func(ctx context.Context, ev *ent.RecordEvent) ([]*RepairEvent, error) {
			if ev.Kind != recordevent.KindFullySigned && ev.Kind != recordevent.KindInventoryCorrected {
				return nil, nil
			}
			// One read for every subscriber of the event (all of its
			// company, the reads under that company), then each one's city.
			all, err := h.repairs.Get(strconv.FormatInt(ev.ID, 10), func() ([]*RepairEvent, error) { return h.repairChanges(ctx, ev) })
			if err != nil || city == nil {
				return all, err
			}
			var mine []*RepairEvent
			for _, r := range all {
				if strings.EqualFold(*r.City, *city) {
					mine = append(mine, r)
				}
			}
			return mine, nil
		},
		func(cursor string) *RepairEvent {
			return &RepairEvent{Cursor: cursor, At: time.Now().UTC(), Kind: RepairRefetch}
		})
}

// repairChanges is RepairChanges read with the hub's client.
func (h *Hub) repairChanges(ctx context.Context, ev *ent.RecordEvent) ([]*RepairEvent, error) {
	return RepairChanges(ctx, h.client, ev)
}

// RepairChanges compares the inventory ev signed (or corrected) with the
// property's signed inventory before it, item by item as the comparison
// matches them, read with client: the subscriptions' after the commit,
// the webhooks' within the event's own transaction.
func RepairChanges(ctx context.Context, client *ent.Client, ev *ent.RecordEvent) ([]*RepairEvent, error) {
	signed, err := client.Inventory.Query().Where(inventory.ID(ev.InventoryID)).WithProperty().
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.Order(ent.Asc(environment.FieldOrder), ent.Asc(environment.FieldID)).WithItems()
		}).
		Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, nil // gone since
	case err != nil:
		return nil, err
	case !signed.IsSigned || signed.SignatureDate == nil:
		return nil, nil
	}
	before, err := client.Inventory.Query().
		Where(inventory.PropertyID(signed.PropertyID), inventory.IsSigned(true), inventory.IDNEQ(signed.ID),
			inventory.SignatureDateLTE(*signed.SignatureDate)).
		Order(ent.Desc(inventory.FieldSignatureDate), ent.Desc(inventory.FieldID)).
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.Order(ent.Asc(environment.FieldOrder), ent.Asc(environment.FieldID)).WithItems()
		}).
		First(ctx)
	if ent.IsNotFound(err) {
		before, err = &ent.Inventory{ID: uuid.Nil}, nil // the first signed: every item to repair is new to the list
	}
	if err != nil {
		return nil, err
	}
	var out []*RepairEvent
	cursor := strconv.FormatInt(ev.ID, 10)
	for _, env := range compare.Compare(before, signed).Environments {
		for _, it := range env.Items {
			was := it.FromToRepair != nil && *it.FromToRepair
			is := it.ToToRepair != nil && *it.ToToRepair
			var kind RepairKind
			item := it.ToItemID
			switch {
			case is && !was:
				kind = Flagged
			case was && !is:
				kind = Repaired
				if item == nil {
					item = it.FromItemID
				}
			default:
				continue
			}
			out = append(out, &RepairEvent{Cursor: cursor, At: ev.At.UTC(), Kind: kind, PropertyID: &signed.PropertyID,
				InventoryID: &signed.ID, ItemID: item, City: &signed.Edges.Property.City})
		}
	}
	return out, nil
}
