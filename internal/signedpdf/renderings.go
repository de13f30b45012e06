package signedpdf

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Defaults of RenderingOptions.
const (
	// DefaultRenderBudget bounds one rendering: the largest inventory the
	// bounds admit renders in about 2 s (BenchmarkLargestSignedPDF), so a
	// rendering over it is stuck, not slow.
	DefaultRenderBudget = 30 * time.Second
	firstRetry          = time.Second
	lastRetry           = 5 * time.Minute
)

// RenderingOptions bound the renderings of signed PDFs.
type RenderingOptions struct {
	// Budget bounds one rendering, its wait for a place included
	// (DefaultRenderBudget when 0).
	Budget time.Duration
	// Places is how many render at once, shared fairly between companies
	// (half the CPUs, at least two, when 0): one company holds at most three
	// quarters of them (internal/fairshare), so with two or more another
	// company's rendering always has a place.
	Places int
}

// Renderings makes the signed PDFs not kept yet: after an inventory's last
// signature, or at the first download of one imported without its PDF.
// Each inventory's is rendered at most once at a time (a signature and the
// downloads that come meanwhile share one rendering), in the background
// under a time budget, a few at a time shared fairly between companies; a
// rendering that fails or runs out of its budget is tried again in the
// background with backoff. A request never renders: it waits for the
// rendering under way, as long as its deadline lets it, or is told when to
// come back (UNAVAILABLE with Retry-After).
type Renderings struct {
	keeper *Keeper
	queue  *fairshare.Queue
	budget time.Duration
	log    *slog.Logger
	// ctx ends with Close: nothing starts or is retried after.
	ctx  context.Context
	stop context.CancelFunc

	mu   sync.Mutex
	byID map[uuid.UUID]*rendering
	// held is the bytes of PDFs rendered but not kept, held in memory to be
	// served meanwhile: at most maxHeld.
	held int
}

// maxHeld bounds the memory of PDFs rendered but not kept (a store that
// refuses writes): past it, they are rendered again when asked for.
const maxHeld = 64 << 20

// rendering is an inventory's rendering: under way until done is closed;
// then its PDF, or its error and when it is tried again.
type rendering struct {
	// kept is what an earlier attempt rendered but could not keep, served
	// while this one tries again.
	kept Rendered
	// holds is the bytes of Renderings.held this rendering holds.
	holds    int
	done     chan struct{}
	pdf      Rendered
	err      error
	retryAt  time.Time
	attempts int
}

// NewRenderings returns the renderings of keeper's PDFs, logging to log.
func NewRenderings(keeper *Keeper, log *slog.Logger, opts RenderingOptions) *Renderings {
	if opts.Budget <= 0 {
		opts.Budget = DefaultRenderBudget
	}
	if opts.Places <= 0 {
		opts.Places = max(2, runtime.GOMAXPROCS(0)/2)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Renderings{keeper: keeper, log: log, budget: opts.Budget, ctx: ctx, stop: stop, byID: map[uuid.UUID]*rendering{},
		queue: fairshare.NewQueue(fairshare.QueueOptions{Places: opts.Places, MaxQueued: 10_000, MaxWait: opts.Budget})}
}

// Close stops the renderings: those under way end, none is tried again.
func (r *Renderings) Close() { r.stop() }

// Start renders inventory id in the background, unless its rendering is
// under way or waits to be tried again.
func (r *Renderings) Start(id uuid.UUID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startLocked(id)
}

func (r *Renderings) startLocked(id uuid.UUID) *rendering {
	if rn, ok := r.byID[id]; ok {
		return rn
	}
	rn := &rendering{done: make(chan struct{})}
	r.byID[id] = rn
	go r.render(id, rn)
	return rn
}

// Await returns the signed PDF of inventory id, not kept yet: rendered in
// the background (Start), waited for as long as ctx allows. Past that, or
// while a failed rendering waits to be tried again, it is UNAVAILABLE with
// the Retry-After of when to ask again.
func (r *Renderings) Await(ctx context.Context, id uuid.UUID) (Rendered, error) {
	r.mu.Lock()
	rn := r.startLocked(id)
	r.mu.Unlock()
	if rn.kept.Data != nil {
		return rn.kept, nil
	}
	select {
	case <-rn.done:
	case <-ctx.Done():
		return Rendered{}, notReady(id, time.Second, "it is being rendered")
	}
	if rn.err == nil || rn.pdf.Data != nil {
		return rn.pdf, nil
	}
	return Rendered{}, notReady(id, time.Until(rn.retryAt), "its rendering failed and is tried again shortly")
}

// Ready waits, as Await does, for the PDF of inventory id to be made.
func (r *Renderings) Ready(ctx context.Context, id uuid.UUID) error {
	_, err := r.Await(ctx, id)
	return err
}

// notReady is the answer to a request for a PDF not rendered yet.
func notReady(id uuid.UUID, retry time.Duration, why string) error {
	return &apperr.Error{Code: apperr.Unavailable, RetryAfter: max(retry, time.Second),
		Message: "the signed PDF of inventory " + id.String() + " is not ready: " + why + "; ask again after the Retry-After seconds"}
}

// render makes one attempt at rn, in a place of its company's fair share,
// and on failure schedules the next.
func (r *Renderings) render(id uuid.UUID, rn *rendering) {
	ctx, cancel := context.WithTimeout(r.ctx, r.budget)
	defer cancel()
	// A download that read "not kept" just before the last rendering kept
	// the PDF (and left byID) starts this one: it is served the kept PDF,
	// not a second rendering. Anything short of the kept file (an error
	// reading it included) renders, as before.
	pdf, kept, _ := r.keeper.stored(tenant.UnrestrictedRecord(ctx, "signed PDF: reading it if it was kept meanwhile", id), id)
	var notKept, err error
	if kept {
		rn.pdf = pdf
	} else {
		ctx = tenant.UnrestrictedRecord(ctx, "signed PDF: rendering it in the background", id)
		var company uuid.UUID
		company, err = r.keeper.companyOf(ctx, id)
		release := func() {}
		if err == nil {
			release, err = r.queue.Acquire(ctx, company.String())
		}
		if err == nil {
			rn.pdf, notKept, err = r.keeper.Provide(ctx, id, "signed PDF: keeping the PDF rendered in the background")
			release()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil && notKept == nil:
		r.held -= rn.holds
		delete(r.byID, id) // kept: served from the store from now on
	case r.ctx.Err() != nil:
		rn.err = cmpErr(err, r.ctx.Err())
		r.held -= rn.holds
		delete(r.byID, id)
	default:
		// Served from memory meanwhile when it was rendered but not kept
		// (a store that refuses writes), within maxHeld, and tried again
		// with backoff.
		if n := len(rn.pdf.Data); n > 0 && rn.holds == 0 {
			if r.held+n > maxHeld {
				rn.pdf = Rendered{}
			} else {
				r.held += n
				rn.holds = n
			}
		}
		rn.err = cmpErr(err, notKept)
		rn.attempts++
		wait := min(firstRetry<<min(rn.attempts-1, 16), lastRetry)
		rn.retryAt = time.Now().Add(wait)
		r.log.LogAttrs(ctx, slog.LevelWarn, "signedpdf: the signed PDF was not made; it is tried again in the background",
			slog.String("inventory", id.String()), slog.Int("attempt", rn.attempts), slog.Duration("retry_in", wait),
			slog.String("error", rn.err.Error()))
		time.AfterFunc(wait, func() { r.retry(id, rn) })
	}
	close(rn.done)
}

// retry starts the next attempt at a failed rendering, in its place.
func (r *Renderings) retry(id uuid.UUID, failed *rendering) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil || r.byID[id] != failed {
		return
	}
	kept := failed.kept
	if failed.pdf.Data != nil {
		kept = failed.pdf
	}
	next := &rendering{done: make(chan struct{}), attempts: failed.attempts, kept: kept, holds: failed.holds}
	r.byID[id] = next
	go r.render(id, next)
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	if otherwise != nil {
		return otherwise
	}
	return errors.New("signedpdf: no rendering")
}

// Keep makes the signed PDF of inventory id and keeps it, for the job
// that makes it after the last signature (internal/jobs): nil once it is
// kept, at once when it was already (the job may run after the
// signature's own wait, or twice). It shares the rendering under way in
// this process, and its place in the fair share; a PDF rendered but not
// kept is an error, for the job to be tried again.
func (r *Renderings) Keep(ctx context.Context, id uuid.UUID) error {
	ctx = tenant.UnrestrictedRecord(ctx, "signed PDF: the job that makes it after the last signature", id)
	if kept, err := r.keeper.kept(ctx, id); err != nil || kept {
		return err
	}
	if err := r.Ready(ctx, id); err != nil {
		return err
	}
	kept, err := r.keeper.kept(ctx, id)
	if err == nil && !kept {
		err = errors.New("signedpdf: the PDF was rendered but not kept yet")
	}
	return err
}
