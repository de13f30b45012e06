package records

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Event is one accepted write, recorded in the write's own transaction: the
// write and its event commit together or not at all.
type Event struct {
	Kind                               recordevent.Kind
	CompanyID, PropertyID, InventoryID uuid.UUID
	// ItemID and PhotoID name the photo of a photo's write.
	ItemID, PhotoID uuid.UUID
	// Version is the inventory's version after the write; 0 where the
	// write did not change it.
	Version int
	// Actor overrides the caller's name (a command's writes).
	Actor string
	// Written is the inventory as the write leaves it, when the writer
	// has it at hand; nil has the event's readers read it.
	Written *Written
}

// Written is an inventory as a write leaves it, in the fields that the
// event's readers in the write's transaction take from it (the webhooks'
// payload): a writer that has them gives them with its event, so that a
// createInventory with subscribers does not read back what it has just
// written (a round trip of the four its deliveries cost).
type Written struct {
	PropertyID    uuid.UUID
	Version       int
	IsSigned      bool
	SignatureDate *time.Time
	PDFSha256     *string
	CreatedAt     time.Time
	UpdatedAt     *time.Time
}

type writtenKey struct{}

type written struct {
	inventory uuid.UUID
	*Written
}

// WrittenIn is inventory as the write whose event is being recorded in ctx
// left it, if its writer gave it.
func WrittenIn(ctx context.Context, inventory uuid.UUID) (*Written, bool) {
	w, ok := ctx.Value(writtenKey{}).(written)
	if !ok || w.inventory != inventory || w.Written == nil {
		return nil, false
	}
	return w.Written, true
}

// Record writes ev with c, a transaction's client.
func Record(ctx context.Context, c *ent.Client, ev Event) error {
	create := c.RecordEvent.Create().SetKind(ev.Kind).SetCompanyID(ev.CompanyID).
		SetPropertyID(ev.PropertyID).SetInventoryID(ev.InventoryID)
	if ev.ItemID != uuid.Nil {
		create.SetItemID(ev.ItemID)
	}
	if ev.PhotoID != uuid.Nil {
		create.SetPhotoID(ev.PhotoID)
	}
	if ev.Version > 0 {
		create.SetVersion(ev.Version)
	}
	actor := ev.Actor
	if actor == "" {
		actor = tenant.CallerName(ctx)
	}
	if actor != "" {
		create.SetActor(truncate(actor, 200))
	}
	if ev.Written != nil {
		ctx = context.WithValue(ctx, writtenKey{}, written{inventory: ev.InventoryID, Written: ev.Written})
	}
	return create.Exec(ctx)
}

// truncate keeps at most n runes of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
