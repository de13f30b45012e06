package records

import (
	"context"

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
