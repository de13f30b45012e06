// Package verify re-hashes every stored PDF and photo against the SHA-256
// recorded when it was stored: the evidence in a deposit dispute is only as
// good as the proof that it has not changed since both parties signed.
//
// Thumbnails are not evidence but derived from it (internal/thumbnail):
// they are not hashed against a record, and verify makes each one that is
// missing or is not a valid thumbnail, from an original it has just found
// unchanged, so that no report has to.
package verify

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// Problem is a stored file that does not match its record.
type Problem struct {
	Key      string // where the file is stored
	Record   string // what names it: "inventory <id>" or "photo <id>"
	Recorded string // the SHA-256 recorded
	Stored   string // the SHA-256 of what is stored; "" when it is missing
}

func (p Problem) String() string {
	if p.Stored == "" {
		return fmt.Sprintf("MISSING  %s (%s, recorded sha256 %s)", p.Key, p.Record, p.Recorded)
	}
	return fmt.Sprintf("CHANGED  %s (%s): recorded sha256 %s, stored %s", p.Key, p.Record, p.Recorded, p.Stored)
}

// Summary counts what was checked.
type Summary struct {
	PDFs, Photos int // files checked
	Changed      int
	Missing      int
	Thumbnails   int // made, where none was kept
}

// OK says whether every checked file matched its record.
func (s Summary) OK() bool { return s.Changed == 0 && s.Missing == 0 }

func (s Summary) String() string {
	return fmt.Sprintf("checked %d PDFs and %d photos: %d changed, %d missing; %d thumbnails made",
		s.PDFs, s.Photos, s.Changed, s.Missing, s.Thumbnails)
}

// batch bounds the records read at once: a portfolio has millions of photos.
const batch = 1000

// Run checks every file with a recorded SHA-256, of every company, calling
// report for each that does not match. Files recorded without a digest
// (imported without one) have nothing to be checked against and are skipped.
func Run(ctx context.Context, client *ent.Client, store *files.Store, report func(Problem)) (Summary, error) {
	ctx = tenant.Unrestricted(ctx, "verify: re-hashing every stored file")
	var sum Summary
	check := func(key, record, recorded string) (bool, error) {
		stored, err := store.Digest(ctx, key)
		switch {
		case apperr.CodeOf(err) == apperr.NotFound:
			sum.Missing++
			report(Problem{Key: key, Record: record, Recorded: recorded})
		case err != nil:
			return false, err
		case stored != recorded:
			sum.Changed++
			report(Problem{Key: key, Record: record, Recorded: recorded, Stored: stored})
		default:
			return true, nil
		}
		return false, nil
	}
	// Keyset pages by id: each page is an index range, whatever came before.
	for after := uuid.Nil; ; {
		page, err := client.Inventory.Query().
			Where(inventory.PdfSha256NotNil(), inventory.IDGT(after)).
			Order(ent.Asc(inventory.FieldID)).Limit(batch).
			Select(inventory.FieldID, inventory.FieldPdfSha256).All(ctx)
		if err != nil {
			return sum, err
		}
		for _, inv := range page {
			sum.PDFs++
			if _, err := check(files.PDFKey(inv.ID.String()), "inventory "+inv.ID.String(), *inv.PdfSha256); err != nil {
				return sum, err
			}
		}
		if len(page) < batch {
			break
		}
		after = page[len(page)-1].ID
	}
	for after := uuid.Nil; ; {
		page, err := client.Photo.Query().
			Where(photo.Sha256NotNil(), photo.IDGT(after)).
			Order(ent.Asc(photo.FieldID)).Limit(batch).
			Select(photo.FieldID, photo.FieldStorageReference, photo.FieldSha256).All(ctx)
		if err != nil {
			return sum, err
		}
		for _, p := range page {
			sum.Photos++
			key, err := files.PhotoKey(p.StorageReference)
			if err != nil {
				return sum, err
			}
			unchanged, err := check(key, "photo "+p.ID.String(), *p.Sha256)
			if err != nil {
				return sum, err
			}
			if !unchanged {
				continue
			}
			// A photo that cannot be shown (too large, unreadable) is the
			// original it was: its reports say so, and it is no problem here.
			made, err := thumbnail.Ensure(ctx, store, p.StorageReference, *p.Sha256)
			if _, notShown := thumbnail.IsNotShown(err); err != nil && !notShown {
				return sum, err
			}
			if made {
				sum.Thumbnails++
			}
		}
		if len(page) < batch {
			break
		}
		after = page[len(page)-1].ID
	}
	return sum, nil
}
