// Package jobs runs the service's durable jobs on River
// (github.com/riverqueue/river): work a write causes that must not be lost
// to a crash, inserted in the write's own transaction (Enqueue), so that no
// write commits without its jobs and no job runs for a write that rolled
// back. River keeps them in the service's database, PostgreSQL or SQLite,
// and retries them; any instance on the database works them.
//
// This is the one place that builds River's client: its queues (one per
// kind, each with its concurrency), the kinds' timeouts and retries, and
// its pools.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/store"
)

// Options configure New.
type Options struct {
	// Log gets River's own lines (at warn and above) and the workers'.
	Log *slog.Logger
	// Work makes a client that works the jobs (the server); without it the
	// client only inserts them (commands that write, which some server on
	// the database works).
	Work bool
	// PollInterval is how often a working client looks for jobs it was not
	// told of (DefaultPollInterval when 0): every new job on SQLite, which
	// has no LISTEN, and a job whose retry came due.
	PollInterval time.Duration
	// WebhookRetryBase is the delay before a webhook delivery's first
	// retry, doubling at each (DefaultWebhookRetryBase when 0; tests make
	// it small).
	WebhookRetryBase time.Duration
}

// DefaultPollInterval bounds how long a job waits for a worker on SQLite.
const DefaultPollInterval = time.Second

// rescueAfter is how long a job may stay running before River takes it for
// the job of a process that died (killed mid-job) and runs it again: longer
// than any kind's timeout.
const rescueAfter = 5 * time.Minute

// Jobs is the River client of the service's database.
type Jobs struct {
	client  *river.Client[*sql.Tx]
	dialect string
	// db is where the metrics read the jobs' states: River's own pool.
	db  *sql.DB
	log *slog.Logger
	// signedPDF is the signed PDF's worker, given what it makes the PDFs
	// with (MakeSignedPDFsWith) before Start.
	signedPDF *signedPDFWorker
	// webhooks is the webhook deliveries' worker, given what sends them
	// (DeliverWebhooksWith) before Start.
	webhooks *webhookWorker
	// thumbnails makes the thumbnails an import left to it, given the
	// records and files (MakeThumbnailsWith) before Start.
	thumbnails *thumbnailsWorker
	// closers close River's own pools after it stopped.
	closers []func()
}

// New builds the River client of st's database. On PostgreSQL River has
// a small pool of its own without the requests' statement timeout (a
// fetch or a maintenance pass is no request's), and a pgx pool to LISTEN
// for new jobs; on SQLite, a pool of one connection on the same file, as
// riversqlite asks (a :memory: database shares the store's pool: another
// pool would be another database).
func New(ctx context.Context, st *store.Store, opts Options) (*Jobs, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	j := &Jobs{dialect: st.Dialect(), log: opts.Log, signedPDF: &signedPDFWorker{log: opts.Log},
		webhooks: &webhookWorker{retryBase: cmpOr(opts.WebhookRetryBase, DefaultWebhookRetryBase)}, thumbnails: &thumbnailsWorker{}}
	driver, err := j.driver(ctx, st)
	if err != nil {
		return nil, err
	}
	config := &river.Config{
		Logger:               riverLogger(opts.Log),
		RescueStuckJobsAfter: rescueAfter,
		FetchPollInterval:    cmpOr(opts.PollInterval, DefaultPollInterval),
		// A kind's InsertOpts and its worker's Timeout take precedence.
		JobTimeout:  time.Minute,
		MaxAttempts: 20,
	}
	if opts.Work {
		config.Queues = queues
		config.Workers = j.workers()
	}
	if j.client, err = river.NewClient(driver, config); err != nil {
		j.close()
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return j, nil
}

// driver is River's driver on st's database, on pools of River's own.
func (j *Jobs) driver(ctx context.Context, st *store.Store) (riverdriver.Driver[*sql.Tx], error) {
	if j.dialect == dialect.Postgres {
		cfg := st.UnboundedConfig()
		j.db = stdlib.OpenDB(*cfg)
		j.db.SetMaxOpenConns(4)
		j.closers = append(j.closers, func() { j.db.Close() })
		poolCfg, err := pgxpool.ParseConfig("")
		if err != nil {
			return nil, err
		}
		poolCfg.ConnConfig = cfg
		poolCfg.MaxConns = 2
		listen, err := pgxpool.NewWithConfig(ctx, poolCfg)
		if err != nil {
			j.close()
			return nil, fmt.Errorf("jobs: River's LISTEN pool: %w", err)
		}
		j.closers = append(j.closers, listen.Close)
		return riverdatabasesql.NewWithPgxListener(j.db, listen), nil
	}
	if path := st.SQLitePath(); path == "" || strings.HasPrefix(path, ":memory:") {
		j.db = st.DB()
		return riversqlite.New(j.db), nil
	}
	db, err := sql.Open("sqlite", store.SQLiteDSN(st.SQLitePath()))
	if err != nil {
		return nil, fmt.Errorf("jobs: opening River's SQLite pool: %w", err)
	}
	db.SetMaxOpenConns(1)
	j.db = db
	j.closers = append(j.closers, func() { db.Close() })
	return riversqlite.New(db), nil
}

// Start works the jobs until Stop. The workers must have what they work
// with by now.
func (j *Jobs) Start(ctx context.Context) error {
	if j.signedPDF.maker == nil {
		return errors.New("jobs: the signed PDF's worker has nothing to make PDFs with (MakeSignedPDFsWith)")
	}
	return j.client.Start(context.WithoutCancel(ctx))
}

// Stop stops fetching jobs and lets those running finish within ctx; past
// it they are cancelled (River runs a cancelled job again later, here or
// on another instance) and given a moment more. Then it closes River's own
// pools. It comes before the store closes. A River that does not stop in
// time (its database does not answer: an SQLite write lock held) is
// logged, not an error of the shutdown: its jobs are all in the database.
func (j *Jobs) Stop(ctx context.Context) error {
	defer j.close()
	err := j.client.Stop(ctx)
	if ctx.Err() != nil {
		cancelCtx, cancel := context.WithTimeout(context.Background(), cancelWithin)
		defer cancel()
		err = j.client.StopAndCancel(cancelCtx)
	}
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "not started"):
		return nil // an insert-only client, or one never started
	case errors.Is(err, context.DeadlineExceeded):
		j.log.Warn("jobs: River did not stop in time; the jobs it ran are run again later", "error", err)
		return nil
	}
	return fmt.Errorf("jobs: stopping River: %w", err)
}

// cancelWithin is how long the jobs cancelled at Stop get to return.
const cancelWithin = time.Second

func (j *Jobs) close() {
	for i := len(j.closers) - 1; i >= 0; i-- {
		j.closers[i]()
	}
	j.closers = nil
}

// Enqueue inserts args in the caller's transaction tx: the job exists if,
// and only if, tx commits, and runs once it has. A unique kind inserted
// again while its job is pending is not inserted twice.
func (j *Jobs) Enqueue(ctx context.Context, tx *ent.Tx, args river.JobArgs) (*rivertype.JobInsertResult, error) {
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	res, err := j.client.InsertTx(ctx, sqlTx, args, nil)
	if err != nil {
		return nil, fmt.Errorf("jobs: inserting a %s job: %w", args.Kind(), err)
	}
	return res, nil
}

// SignedPDF inserts, in tx, the job that makes the signed PDF of
// inventory id of company: records.Service calls it in the transaction of
// the signature that completes the inventory.
func (j *Jobs) SignedPDF(ctx context.Context, tx *ent.Tx, company, id uuid.UUID) error {
	_, err := j.Enqueue(ctx, tx, SignedPDFArgs{InventoryID: id, CompanyID: company})
	return err
}

// MakeSignedPDFsWith gives the signed PDF's worker what makes the PDFs
// (the server's signedpdf.Renderings), before Start.
func (j *Jobs) MakeSignedPDFsWith(maker SignedPDFMaker) { j.signedPDF.maker = maker }

// Client is River's client, for tests and tools (JobList, JobGet).
func (j *Jobs) Client() *river.Client[*sql.Tx] { return j.client }

// riverLogger passes on River's warnings and errors, its errors as
// warnings: they are its own retries of a database that did not answer in
// time (a fetch, a leader's resignation), which it tries again, never a
// request's failure; a job's failure is its worker's, which River retries.
// Its info lines (each start, each maintenance pass) are noise in the
// service's log.
func riverLogger(log *slog.Logger) *slog.Logger {
	return slog.New(riverLevels{Handler: log.Handler()}).With("component", "river")
}

type riverLevels struct{ slog.Handler }

func (h riverLevels) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, slog.LevelWarn)
}

func (h riverLevels) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelWarn {
		r.Level = slog.LevelWarn
	}
	return h.Handler.Handle(ctx, r)
}

func (h riverLevels) WithAttrs(attrs []slog.Attr) slog.Handler {
	return riverLevels{Handler: h.Handler.WithAttrs(attrs)}
}

func (h riverLevels) WithGroup(name string) slog.Handler {
	return riverLevels{Handler: h.Handler.WithGroup(name)}
}

func cmpOr(d, otherwise time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return otherwise
}
