package records

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/upload"
)

// NewPhoto is a photo sent for an item.
type NewPhoto struct {
	ItemID uuid.UUID
	// ID, when the client chose it, makes the request safe to send again:
	// a photo of that id on that item answers as made, nothing stored.
	ID uuid.UUID
	// File holds Size bytes (-1: unknown); MaxBytes bounds it.
	File           io.Reader
	Size, MaxBytes int64
}

// The fields a photo is refused on, in addItemPhoto's and removeItemPhoto's
// arguments.
const (
	fieldItemID  = "itemId"
	fieldPhotoID = "photoId"
)

// AddPhoto stores a photo of an item of an unsigned inventory of the
// caller's company and records it, returning its id. The item is checked
// before anything is stored, the file is checked by what it holds and
// streamed to the store (internal/upload), and the record is written in
// one transaction in which the freeze hook checks the inventory again; a
// record that does not commit takes its file with it.
func (s *Service) AddPhoto(ctx context.Context, p NewPhoto) (uuid.UUID, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	if s.files == nil {
		return uuid.Nil, apperr.Errorf(apperr.Unavailable, "photos cannot be taken: the service has no file store")
	}
	it, err := s.writableItem(ctx, p.ItemID)
	if err != nil {
		return uuid.Nil, err
	}
	if p.ID == uuid.Nil {
		p.ID = uuid.New()
	} else if sent, err := s.client.Photo.Query().Where(photo.ID(p.ID)).Only(ctx); err == nil && sent.ItemID == p.ItemID {
		return p.ID, nil // sent again after it was taken: nothing stored
	} else if err != nil && !ent.IsNotFound(err) {
		return uuid.Nil, err
	} else if err := s.checkIDsUnused(ctx, []givenID{{id: p.ID, field: fieldPhotoID}}); err != nil {
		return uuid.Nil, err // another item's photo, of the caller's or not, or another record
	}
	stored, err := upload.Store(ctx, s.files, p.ID, p.File, p.Size, p.MaxBytes)
	if err != nil {
		return uuid.Nil, err
	}
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		inv, err := halfSignedIn(ctx, tx.Client(), it.Edges.Environment.InventoryID)
		if err != nil {
			return err
		}
		if err := tx.Photo.Create().SetID(p.ID).SetCompanyID(it.CompanyID).SetItemID(it.ID).
			SetStorageReference(stored.Reference).SetSha256(stored.SHA256).Exec(ctx); err != nil {
			return err
		}
		return Record(ctx, tx.Client(), photoEvent(recordevent.KindPhotoAdded, inv, it.ID, p.ID))
	})
	if err != nil {
		// The file was stored under the photo's own id: no other record
		// names it, so it goes. (Its thumbnail is kept by digest, shared
		// with any photo of the same bytes, and harmless alone.)
		if key, kerr := files.PhotoKey(stored.Reference); kerr == nil {
			_ = s.files.Delete(context.WithoutCancel(ctx), key)
		}
		if ent.IsConstraintError(err) {
			e := idInUse(fieldPhotoID, p.ID) // taken meanwhile
			e.Cause = err
			return uuid.Nil, e
		}
		return uuid.Nil, err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "records: photo added", tenant.CallerAttrs(ctx, []slog.Attr{
		slog.String("company", it.CompanyID.String()), slog.String("inventory", it.Edges.Environment.InventoryID.String()),
		slog.String("item", it.ID.String()), slog.String("photo", p.ID.String()), slog.String("sha256", stored.SHA256),
		slog.Int64("bytes", stored.Bytes)})...)
	return p.ID, nil
}

// RemovePhoto removes a photo of an unsigned inventory's item, and then its
// file; it returns the item.
func (s *Service) RemovePhoto(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	ph, err := s.client.Photo.Query().Where(photo.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return uuid.Nil, &apperr.Error{Code: apperr.NotFound, Field: fieldPhotoID, Message: fmt.Sprintf("photo %s not found", id)}
	}
	if err != nil {
		return uuid.Nil, err
	}
	it, err := s.writableItem(ctx, ph.ItemID)
	if err != nil {
		return uuid.Nil, err
	}
	// The freeze hook checks the inventory unsigned again as it deletes.
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		inv, err := halfSignedIn(ctx, tx.Client(), it.Edges.Environment.InventoryID)
		if err != nil {
			return err
		}
		if err := tx.Photo.DeleteOneID(id).Exec(ctx); err != nil {
			return err
		}
		return Record(ctx, tx.Client(), photoEvent(recordevent.KindPhotoRemoved, inv, it.ID, id))
	})
	if ent.IsNotFound(err) {
		return uuid.Nil, &apperr.Error{Code: apperr.NotFound, Field: fieldPhotoID, Message: fmt.Sprintf("photo %s not found", id)}
	}
	if err != nil {
		return uuid.Nil, err
	}
	// After the commit: a file without a record is harmless, a record
	// without its file is not.
	if s.files != nil {
		if key, kerr := files.PhotoKey(ph.StorageReference); kerr == nil {
			_ = s.files.Delete(context.WithoutCancel(ctx), key)
		}
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "records: photo removed", tenant.CallerAttrs(ctx, []slog.Attr{
		slog.String("company", it.CompanyID.String()), slog.String("inventory", it.Edges.Environment.InventoryID.String()),
		slog.String("item", it.ID.String()), slog.String("photo", id.String())})...)
	return it.ID, nil
}

// photoEvent is the event of a photo's write: the inventory's version does
// not change with its photos.
func photoEvent(kind recordevent.Kind, inv *ent.Inventory, itemID, photoID uuid.UUID) Event {
	return Event{Kind: kind, CompanyID: inv.CompanyID, PropertyID: inv.PropertyID, InventoryID: inv.ID, ItemID: itemID, PhotoID: photoID}
}

// writableItem is the caller's item with its environment, refused when its
// inventory is signed (by either party): said before anything is stored.
func (s *Service) writableItem(ctx context.Context, id uuid.UUID) (*ent.Item, error) {
	it, err := s.client.Item.Query().Where(item.ID(id)).WithEnvironment().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Code: apperr.NotFound, Field: fieldItemID, Message: fmt.Sprintf("item %s not found", id)}
	}
	if err != nil {
		return nil, err
	}
	if _, err := halfSignedIn(ctx, s.client, it.Edges.Environment.InventoryID); err != nil {
		return nil, err
	}
	return it, nil
}

// halfSignedIn refuses a change of inventory id once any party signed it.
func halfSignedIn(ctx context.Context, c *ent.Client, id uuid.UUID) (*ent.Inventory, error) {
	inv, err := c.Inventory.Get(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case inv.IsSigned:
		return nil, freeze.Refusal(id)
	case anySigned(inv):
		return nil, halfSigned(id)
	}
	return inv, nil
}
