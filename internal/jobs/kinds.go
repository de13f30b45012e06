package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The queues, one per kind, so that each kind has its own concurrency
// and a backlog of one never holds another's workers.
const (
	QueueSignedPDF = "signed_pdf"
)

// queues are the kinds' concurrency on each instance.
var queues = map[string]river.QueueConfig{
	// Two at a time: the renderings themselves take places of
	// signedpdf.Renderings' fair share between companies (half the CPUs),
	// which the signatures' and downloads' renderings share.
	QueueSignedPDF: {MaxWorkers: 2},
	// Receivers answer within 10 s or are cut: see webhookWorkers. A
	// delivery to a prompt receiver takes a few milliseconds: River's
	// default 100 ms between fetches would cap the queue at 100 a second
	// (its workers per fetch), so it fetches again after 10 ms while
	// deliveries keep coming (idle, it waits for LISTEN or the poll).
	QueueWebhookDelivery: {MaxWorkers: webhookWorkers, FetchCooldown: webhookFetchCooldown},
	// One at a time: a decode is up to a second of one CPU, and these are
	// no one's request (a report makes a missing thumbnail itself, in its
	// company's fair share); one company's large import makes another's
	// thumbnails wait, never its reports.
	QueueThumbnails: {MaxWorkers: 1},
}

// workers registers each kind's worker.
func (j *Jobs) workers() *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, j.signedPDF)
	river.AddWorker(w, j.webhooks)
	river.AddWorker(w, j.thumbnails)
	return w
}

// SignedPDFArgs is the job of making the signed PDF of an inventory whose
// last required signature committed with it.
type SignedPDFArgs struct {
	// InventoryID is the job's unique key: one pending job per inventory.
	InventoryID uuid.UUID `json:"inventory_id" river:"unique"`
	// CompanyID names the company whose job it is (River's job list and
	// the logs); not part of the key.
	CompanyID uuid.UUID `json:"company_id"`
}

// Kind names the kind in river_job and the metrics.
func (SignedPDFArgs) Kind() string { return "signed_pdf" }

// signedPDFAttempts at River's backoff (attempt⁴ seconds, with jitter)
// retry for about a week: a store that refuses writes is fixed by then, or
// the PDF is made at its first download all the same.
const signedPDFAttempts = 20

// InsertOpts: unique per inventory while the job waits or runs (not once
// it completed: a later job then finds the PDF kept and does nothing).
func (SignedPDFArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueSignedPDF,
		MaxAttempts: signedPDFAttempts,
		UniqueOpts:  uniqueUntilDone(),
	}
}

// uniqueUntilDone makes a kind unique by its args while a job of them
// waits or runs (every state River requires), not once it completed: a
// later one then finds its work done and completes at once.
func uniqueUntilDone() river.UniqueOpts {
	return river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled}}
}

// SignedPDFMaker makes and keeps an inventory's signed PDF
// (signedpdf.Renderings): nil once it is kept, at once when it was
// already.
type SignedPDFMaker interface {
	Keep(ctx context.Context, id uuid.UUID) error
}

// signedPDFWorker works SignedPDFArgs.
type signedPDFWorker struct {
	river.WorkerDefaults[SignedPDFArgs]
	maker SignedPDFMaker
	log   *slog.Logger
}

// signedPDFTimeout bounds an attempt: a rendering's budget
// (signedpdf.DefaultRenderBudget, its wait for a place included), and a
// margin to keep it.
const signedPDFTimeout = time.Minute

func (w *signedPDFWorker) Timeout(*river.Job[SignedPDFArgs]) time.Duration { return signedPDFTimeout }

func (w *signedPDFWorker) Work(ctx context.Context, job *river.Job[SignedPDFArgs]) error {
	if err := w.maker.Keep(ctx, job.Args.InventoryID); err != nil {
		return fmt.Errorf("jobs: the signed PDF of inventory %s: %w", job.Args.InventoryID, err)
	}
	w.log.LogAttrs(ctx, slog.LevelInfo, "jobs: the signed PDF is kept", slog.String("inventory", job.Args.InventoryID.String()),
		slog.String("company", job.Args.CompanyID.String()), slog.Int("attempt", job.Attempt))
	return nil
}
