// Package verify re-hashes every stored PDF and photo against the SHA-256
// recorded when it was stored: the evidence in a deposit dispute is only as
// good as the proof that it has not changed since both parties signed.
//
// Thumbnails are not evidence but derived from it (internal/thumbnail):
// they are not hashed against a record, and verify makes each one that is
// missing or is not a valid thumbnail, from an original it has just found
// unchanged, so that no report has to.
//
// It also finds what no record accounts for: stored files no record names
// (a process killed between storing a photo and committing its record) and
// the temporary files of writes that never finished, and, asked to repair,
// removes those last written more than an hour before it started.
package verify

import (
	"context"
	"fmt"
	"time"

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
	switch {
	case p.Stored == "" && p.Recorded == "":
		return fmt.Sprintf("MISSING  %s (%s, no sha256 recorded)", p.Key, p.Record)
	case p.Stored == "":
		return fmt.Sprintf("MISSING  %s (%s, recorded sha256 %s)", p.Key, p.Record, p.Recorded)
	}
	return fmt.Sprintf("CHANGED  %s (%s): recorded sha256 %s, stored %s", p.Key, p.Record, p.Recorded, p.Stored)
}

// Stray is a stored file no record accounts for.
type Stray struct {
	Key      string
	Modified time.Time
	// Temporary: an unfinished write's temporary file; otherwise a file
	// no record names.
	Temporary bool
	// Removed says it was removed; Young, that it was left for being
	// written after the cutoff (a write may be under way).
	Removed, Young bool
}

func (s Stray) String() string {
	what := "UNNAMED  %s (no record names it; written %s)"
	if s.Temporary {
		what = "LEFTOVER %s (the temporary file of a write that never finished; written %s)"
	}
	out := fmt.Sprintf(what, s.Key, s.Modified.UTC().Format(time.RFC3339))
	switch {
	case s.Removed:
		out += ": removed"
	case s.Young:
		out += ": left, written within the hour (a write may be under way)"
	}
	return out
}

// Summary counts what was checked.
type Summary struct {
	PDFs, Photos int // files checked
	Changed      int
	Missing      int
	Thumbnails   int // made, where none was kept
	Unnamed      int // stored files no record names
	Leftovers    int // temporary files of unfinished writes
	Removed      int // of those two, removed (Options.Repair)
}

// OK says whether every checked file matched its record.
func (s Summary) OK() bool { return s.Changed == 0 && s.Missing == 0 }

func (s Summary) String() string {
	return fmt.Sprintf("checked %d PDFs and %d photos: %d changed, %d missing; %d thumbnails made; %d files no record names, %d temporary files of unfinished writes, %d removed",
		s.PDFs, s.Photos, s.Changed, s.Missing, s.Thumbnails, s.Unnamed, s.Leftovers, s.Removed)
}

// Options say what Run reports and repairs.
type Options struct {
	// Report is told of each file that does not match its record.
	Report func(Problem)
	// Stray is told of each file no record accounts for.
	Stray func(Stray)
	// Repair removes the strays last written before Cutoff.
	Repair bool
	// Cutoff: strays written after it are reported and left, whatever
	// Repair says: a photo is stored before its record commits, so a file
	// without one may be an upload under way. Zero is an hour before Run
	// starts, far past any request's deadline.
	Cutoff time.Time
}

// StrayAge is how old a stray must be for a repair to remove it.
const StrayAge = time.Hour

// batch bounds the records read at once: a portfolio has millions of photos.
const batch = 1000

// Run checks every file with a recorded SHA-256, of every company, calling
// opts.Report for each that does not match. Photos recorded without a
// digest (imported without one) have nothing to be checked against: only
// that their file is there. Then it looks for strays (see Options).
func Run(ctx context.Context, client *ent.Client, store *files.Store, opts Options) (Summary, error) {
	ctx = tenant.Unrestricted(ctx, "verify: re-hashing every stored file")
	if opts.Cutoff.IsZero() {
		opts.Cutoff = time.Now().Add(-StrayAge)
	}
	report := opts.Report
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
			Where(photo.IDGT(after)).
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
			if p.Sha256 == nil {
				if err := there(ctx, store, key); apperr.CodeOf(err) == apperr.NotFound {
					sum.Missing++
					report(Problem{Key: key, Record: "photo " + p.ID.String()})
				} else if err != nil {
					return sum, err
				}
				continue
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
	err := strays(ctx, client, store, opts, &sum)
	return sum, err
}

// there says whether key is stored: nil, or NotFound.
func there(ctx context.Context, store *files.Store, key string) error {
	obj, err := store.Open(ctx, key)
	if err != nil {
		return err
	}
	return obj.Close()
}
