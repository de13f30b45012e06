package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/hook"
	"github.com/propertyrecords/inventory/ent/webhookendpoint"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/records"
)

// EnqueueOn has every record event written through client (and its
// transactions) make, in the event's own transaction, a delivery and its
// job for each enabled endpoint of the event's company subscribed to its
// kind: no write commits without its deliveries, none is sent for a write
// that rolled back. A hook on RecordEvent rather than a call in
// records.Record: every writer of events (records, the signed PDF's
// keeping, the import's corrections) goes through it, and none can forget.
func (s *Service) EnqueueOn(client *ent.Client) {
	client.RecordEvent.Use(hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.RecordEventFunc(func(ctx context.Context, m *ent.RecordEventMutation) (ent.Value, error) {
			v, err := next.Mutate(ctx, m)
			if err != nil {
				return v, err
			}
			ev, ok := v.(*ent.RecordEvent)
			if !ok {
				return v, fmt.Errorf("webhooks: a record event's creation answered a %T", v)
			}
			tx, err := m.Tx()
			if err != nil {
				// Never outside the write's transaction: a delivery
				// inserted apart could be sent for a write that rolled back.
				return v, fmt.Errorf("webhooks: a record event written outside a transaction: %w", err)
			}
			return v, s.enqueue(ctx, tx, ev)
		})
	}, ent.OpCreate))
}

// enqueue makes ev's deliveries and their jobs in tx.
func (s *Service) enqueue(ctx context.Context, tx *ent.Tx, ev *ent.RecordEvent) error {
	kind, ok := KindOf(ev.Kind)
	if !ok || s.jobs == nil {
		return nil
	}
	// One indexed read per event: a company's endpoints are few (at most
	// MaxEndpoints); their events are a JSON list, matched here.
	endpoints, err := tx.WebhookEndpoint.Query().
		Where(webhookendpoint.CompanyID(ev.CompanyID), webhookendpoint.Enabled(true)).
		Select(webhookendpoint.FieldID, webhookendpoint.FieldEvents).All(ctx)
	if err != nil {
		return fmt.Errorf("webhooks: the endpoints of an event: %w", err)
	}
	var creates []*ent.WebhookDeliveryCreate
	deliver := func(k Kind, payload []byte, subscribed []*ent.WebhookEndpoint) {
		for _, ep := range subscribed {
			creates = append(creates, tx.WebhookDelivery.Create().SetCompanyID(ev.CompanyID).SetEndpointID(ep.ID).
				SetEventID(ev.ID).SetEventKind(string(k)).SetInventoryID(ev.InventoryID).
				SetNillableVersion(ev.Version).SetPayload(string(payload)).SetCreatedAt(ev.At))
		}
	}
	wanted := len(subscribedTo(endpoints, kind)) > 0
	repairs := repairsChangeWith[ev.Kind] && (len(subscribedTo(endpoints, RepairFlagged)) > 0 || len(subscribedTo(endpoints, RepairRepaired)) > 0)
	if !wanted && !repairs {
		return nil
	}
	inv, signature, err := summary(ctx, tx, ev)
	if err != nil {
		return err
	}
	if wanted {
		body := payload(ev, kind, inv, nil, signature)
		deliver(kind, body, subscribedTo(endpoints, kind))
	}
	if repairs {
		// Read in the event's transaction: the repair list as this
		// signature leaves it, compared with the signed inventory before.
		changes, err := live.RepairChanges(ctx, tx.Client(), ev)
		if err != nil {
			return fmt.Errorf("webhooks: the repair list's changes: %w", err)
		}
		for _, c := range changes {
			k := RepairFlagged
			if c.Kind == live.Repaired {
				k = RepairRepaired
			}
			deliver(k, payload(ev, k, inv, c, nil), subscribedTo(endpoints, k))
		}
	}
	if len(creates) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(creates))
	// In batches: a signature that changes every item of a large
	// inventory for 20 endpoints makes thousands, past a statement's
	// parameters.
	for batch := range slices.Chunk(creates, insertBatch) {
		made, err := tx.WebhookDelivery.CreateBulk(batch...).Save(ctx)
		if err != nil {
			return fmt.Errorf("webhooks: the deliveries of an event: %w", err)
		}
		for _, d := range made {
			ids = append(ids, d.ID)
		}
	}
	for batch := range slices.Chunk(ids, insertBatch) {
		if err := s.jobs.WebhookDeliveries(ctx, tx, ev.CompanyID, batch); err != nil {
			return err
		}
	}
	return nil
}

// insertBatch is the rows one statement inserts.
const insertBatch = 500

// subscribedTo are the endpoints sent kind.
func subscribedTo(endpoints []*ent.WebhookEndpoint, kind Kind) []*ent.WebhookEndpoint {
	var out []*ent.WebhookEndpoint
	for _, ep := range endpoints {
		if slices.Contains(ep.Events, string(kind)) {
			out = append(out, ep)
		}
	}
	return out
}

// Payload is the body every delivery POSTs, as Standard Webhooks shapes it.
type Payload struct {
	// Type is the kind in the dotted form (inventory.fully_signed).
	Type string `json:"type"`
	// Timestamp is when the write happened (UTC).
	Timestamp time.Time `json:"timestamp"`
	Data      EventData `json:"data"`
}

// EventData tells the event as inventoryEvents does, with a summary of the
// inventory as the write left it; the receiver reads more through the API.
type EventData struct {
	// Cursor orders a company's events (no order of delivery is promised):
	// inventoryEvents' cursor, to resume from.
	Cursor      string    `json:"cursor"`
	Kind        Kind      `json:"kind"`
	CompanyID   uuid.UUID `json:"companyId"`
	PropertyID  uuid.UUID `json:"propertyId"`
	InventoryID uuid.UUID `json:"inventoryId"`
	// ItemID is the photo's item, or the item of a repair's change.
	ItemID  *uuid.UUID `json:"itemId,omitempty"`
	PhotoID *uuid.UUID `json:"photoId,omitempty"`
	// City is the property's, for a repair's change.
	City *string `json:"city,omitempty"`
	// Version is the inventory's after the write, where it changed.
	Version   *int              `json:"version,omitempty"`
	By        *string           `json:"by,omitempty"`
	Inventory *InventorySummary `json:"inventory,omitempty"`
	// Signature is the signature an AGENT_SIGNED, OWNER_SIGNED or
	// TENANT_SIGNED event tells of, as it was made: whether it was remote
	// is known then, while the inventory's isRemoteSigned is set once it
	// is fully signed.
	Signature *PartySignature `json:"signature,omitempty"`
}

// PartySignature is one party's signature, as GraphQL's
// Inventory.signatures lists it.
type PartySignature struct {
	Party      records.Party           `json:"party"`
	SignerName *string                 `json:"signerName,omitempty"`
	SignedAt   time.Time               `json:"signedAt"`
	Remote     bool                    `json:"remote"`
	Method     records.SignatureMethod `json:"method"`
}

// InventorySummary is the inventory as the event's transaction left it.
type InventorySummary struct {
	ID            uuid.UUID  `json:"id"`
	PropertyID    uuid.UUID  `json:"propertyId"`
	Version       int        `json:"version"`
	IsSigned      bool       `json:"isSigned"`
	SignatureDate *time.Time `json:"signatureDate,omitempty"`
	PDFSHA256     *string    `json:"pdfSha256,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     *time.Time `json:"updatedAt,omitempty"`
}

// summary is ev's inventory as ev's transaction leaves it (nil when it is
// gone), read once for all of the event's deliveries, and for a party's
// signature event that signature.
func summary(ctx context.Context, tx *ent.Tx, ev *ent.RecordEvent) (*InventorySummary, *PartySignature, error) {
	party, signs := records.SignedIn(ev.Kind)
	if w, ok := records.WrittenIn(ctx, ev.InventoryID); ok && !signs {
		return &InventorySummary{ID: ev.InventoryID, PropertyID: w.PropertyID, Version: w.Version, IsSigned: w.IsSigned,
			SignatureDate: w.SignatureDate, PDFSHA256: w.PDFSha256, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}, nil, nil
	}
	inv, err := tx.Inventory.Get(ctx, ev.InventoryID)
	switch {
	case ent.IsNotFound(err):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("webhooks: the inventory of an event: %w", err)
	}
	var signature *PartySignature
	if signs {
		if s := records.SignatureOf(inv, party); s != nil {
			signature = &PartySignature{Party: s.Party, SignerName: s.SignerName, SignedAt: s.SignedAt, Remote: s.Remote, Method: s.Method}
		}
	}
	return &InventorySummary{ID: inv.ID, PropertyID: inv.PropertyID, Version: inv.Version, IsSigned: inv.IsSigned,
		SignatureDate: inv.SignatureDate, PDFSHA256: inv.PdfSha256, CreatedAt: inv.CreatedAt, UpdatedAt: inv.UpdatedAt}, signature, nil
}

// payload is ev's body as kind, with its inventory as the write made it
// (whatever a later write does before the delivery), and the signature a
// party's signature event made. A repair's change names its item and city.
func payload(ev *ent.RecordEvent, kind Kind, inv *InventorySummary, repair *live.RepairEvent, signature *PartySignature) []byte {
	p := Payload{Type: kind.Type(), Timestamp: ev.At.UTC(), Data: EventData{Cursor: strconv.FormatInt(ev.ID, 10), Kind: kind,
		CompanyID: ev.CompanyID, PropertyID: ev.PropertyID, InventoryID: ev.InventoryID, ItemID: ev.ItemID, PhotoID: ev.PhotoID,
		Version: ev.Version, By: ev.Actor, Inventory: inv, Signature: signature}}
	if repair != nil {
		p.Data.ItemID, p.Data.PhotoID, p.Data.City = repair.ItemID, nil, repair.City
	}
	b, _ := json.Marshal(p) // plain values: never fails
	return b
}
