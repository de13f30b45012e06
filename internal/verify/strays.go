package verify

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/files"
)

// strays reports, and with opts.Repair removes, the files no record
// accounts for: PDFs of no inventory, photos no record names, and the
// temporary files of unfinished writes. Thumbnails are not strays by
// themselves (derived, named by a digest, harmless); one made of a stray
// photo goes with it, unless a record has that digest too.
func strays(ctx context.Context, client *ent.Client, store *files.Store, opts Options, sum *Summary) error {
	found := func(e files.Entry, temporary bool) error {
		s := Stray{Key: e.Key, Modified: e.Modified, Temporary: temporary, Young: !e.Modified.Before(opts.Cutoff)}
		if temporary {
			sum.Leftovers++
		} else {
			sum.Unnamed++
		}
		if opts.Repair && !s.Young {
			removed, err := remove(ctx, client, store, s)
			if err != nil {
				return err
			}
			if s.Removed = removed; removed {
				sum.Removed++
			}
		}
		if opts.Stray != nil {
			opts.Stray(s)
		}
		return nil
	}
	for _, prefix := range []string{"pdf/", "photos/"} {
		// The listing is read in batches, each looked up in one query: a
		// store holds millions of photos, and their names are indexed.
		var batch []files.Entry
		flush := func() error {
			named, err := namedOf(ctx, client, prefix, batch)
			if err != nil {
				return err
			}
			for _, e := range batch {
				if !named[e.Key] {
					if err := found(e, false); err != nil {
						return err
					}
				}
			}
			batch = batch[:0]
			return nil
		}
		err := store.Walk(ctx, prefix, func(e files.Entry) error {
			if batch = append(batch, e); len(batch) == batchSize {
				return flush()
			}
			return nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return err
		}
	}
	return store.Leftovers(ctx, func(e files.Entry) error { return found(e, true) })
}

// batchSize bounds the keys looked up in one query.
const batchSize = batch

// namedOf returns which of entries, all under prefix, a record names.
func namedOf(ctx context.Context, client *ent.Client, prefix string, entries []files.Entry) (map[string]bool, error) {
	named := make(map[string]bool, len(entries))
	if len(entries) == 0 {
		return named, nil
	}
	switch prefix {
	case "pdf/":
		ids := make([]uuid.UUID, 0, len(entries))
		for _, e := range entries {
			if id, ok := pdfOf(e.Key); ok {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			break // no key of the batch is an inventory's PDF
		}
		have, err := client.Inventory.Query().Where(inventory.IDIn(ids...)).IDs(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range have {
			named[files.PDFKey(id.String())] = true
		}
	case "photos/":
		refs := make([]string, 0, len(entries))
		for _, e := range entries {
			refs = append(refs, strings.TrimPrefix(e.Key, prefix))
		}
		have, err := client.Photo.Query().Where(photo.StorageReferenceIn(refs...)).Select(photo.FieldStorageReference).Strings(ctx)
		if err != nil {
			return nil, err
		}
		for _, ref := range have {
			named[prefix+ref] = true
		}
	}
	return named, nil
}

// pdfOf is the inventory whose PDF key is.
func pdfOf(key string) (uuid.UUID, bool) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(key, "pdf/"), ".pdf")
	if !ok {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(name)
	return id, err == nil && files.PDFKey(id.String()) == key
}

// remove removes a stray, after asking once more whether a record names it
// (one committed since its batch was read), and a stray photo's thumbnail
// that no record's digest names. It reports whether it removed it.
func remove(ctx context.Context, client *ent.Client, store *files.Store, s Stray) (bool, error) {
	if !s.Temporary {
		named, err := namedOf(ctx, client, s.Key[:strings.IndexByte(s.Key, '/')+1], []files.Entry{{Key: s.Key}})
		if err != nil || named[s.Key] {
			return false, err
		}
	}
	var thumb string
	if !s.Temporary && strings.HasPrefix(s.Key, "photos/") {
		sum, err := store.Digest(ctx, s.Key)
		if err != nil {
			return false, err
		}
		shared, err := client.Photo.Query().Where(photo.Sha256(sum)).Exist(ctx)
		if err != nil {
			return false, err
		}
		if !shared {
			thumb, _ = files.ThumbnailKey(sum)
		}
	}
	if err := store.Delete(ctx, s.Key); err != nil {
		return false, err
	}
	if thumb != "" {
		if err := store.Delete(ctx, thumb); err != nil {
			return true, err
		}
	}
	return true, nil
}
