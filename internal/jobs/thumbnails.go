package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// QueueThumbnails is the queue of thumbnails not made when their photos
// were stored: an import stores its photos' files and leaves the decodes
// to this job, which commits with the inventory's transaction.
const QueueThumbnails = "thumbnails"

// ThumbnailsArgs is the job of making the missing thumbnails of one
// inventory's photos.
type ThumbnailsArgs struct {
	// InventoryID is the job's unique key: one pending job per inventory.
	InventoryID uuid.UUID `json:"inventory_id" river:"unique"`
	// CompanyID is the company whose inventory it is: the worker reads as
	// that company (the tenancy policy), and River's job list names it.
	CompanyID uuid.UUID `json:"company_id"`
}

// Kind names the kind in river_job and the metrics.
func (ThumbnailsArgs) Kind() string { return "thumbnails" }

// thumbnailsAttempts at River's backoff (attempt⁴ seconds) retry for about
// a day: a blob store down for that long is an outage the operator knows
// of, and a thumbnail still missing is made by the first report that shows
// its photo.
const thumbnailsAttempts = 12

// InsertOpts: unique per inventory while the job waits or runs (an
// import line repeated before it is done makes no second job; one after
// finds the thumbnails kept and decodes nothing; a photo of a line
// imported while its job ran is made by the first report that shows it).
func (ThumbnailsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueThumbnails,
		MaxAttempts: thumbnailsAttempts,
		UniqueOpts:  uniqueUntilDone(),
	}
}

// thumbnailsTimeout bounds an attempt: each photo's decode is bounded to
// about a second of CPU (thumbnail.MaxDecodeWork), and an inventory's
// photos are bounded by the schema's lists; an attempt cut short keeps
// what it made, and the next goes on from there.
const thumbnailsTimeout = 10 * time.Minute

// thumbnailsWorker works ThumbnailsArgs.
type thumbnailsWorker struct {
	river.WorkerDefaults[ThumbnailsArgs]
	client *ent.Client
	files  *files.Store
}

func (w *thumbnailsWorker) Timeout(*river.Job[ThumbnailsArgs]) time.Duration {
	return thumbnailsTimeout
}

func (w *thumbnailsWorker) Work(ctx context.Context, job *river.Job[ThumbnailsArgs]) error {
	if w.client == nil || w.files == nil {
		return fmt.Errorf("jobs: the thumbnails' worker has no records or files (MakeThumbnailsWith)")
	}
	ctx = tenant.WithCompany(ctx, job.Args.CompanyID)
	photos, err := w.client.Photo.Query().
		Where(photo.HasItemWith(item.HasEnvironmentWith(environment.HasInventoryWith(inventory.ID(job.Args.InventoryID))))).
		Select(photo.FieldStorageReference, photo.FieldSha256).All(ctx)
	if err != nil {
		return err
	}
	for _, p := range photos {
		if p.Sha256 == nil {
			continue // a legacy reference without a file: nothing to show
		}
		_, err := thumbnail.Ensure(ctx, w.files, p.StorageReference, *p.Sha256)
		if _, notShown := thumbnail.IsNotShown(err); err != nil && !notShown {
			return fmt.Errorf("jobs: the thumbnail of photo %s: %w", p.ID, err)
		}
	}
	return nil
}

// Thumbnails inserts, in tx, the job that makes the missing thumbnails of
// inventory id of company: an import calls it in the transaction that
// writes the inventory's photos.
func (j *Jobs) Thumbnails(ctx context.Context, tx *ent.Tx, company, id uuid.UUID) error {
	_, err := j.Enqueue(ctx, tx, ThumbnailsArgs{InventoryID: id, CompanyID: company})
	return err
}

// MakeThumbnailsWith gives the thumbnails' worker the records it reads and
// the files it keeps the thumbnails in, before Start.
func (j *Jobs) MakeThumbnailsWith(client *ent.Client, fs *files.Store) {
	j.thumbnails.client, j.thumbnails.files = client, fs
}
