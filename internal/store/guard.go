package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/dbtime"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

// guard sits between ent and the database. It admits at most size
// statements (or transactions) at a time and makes the rest wait at most
// acquireTimeout, so that when every connection is held (by requests waiting
// on a locked table, say) other requests are told at once that the database
// is busy rather than hanging until their deadline. And it turns the
// database's "I cannot answer" failures into apperr.Unavailable, so that
// clients are told to retry rather than that the service is broken.
//
// database/sql has no acquire timeout of its own, and gives the caller's
// context to both the wait for a connection and the statement, so the wait
// is bounded here, in front of it.
type guard struct {
	dialect.Driver
	slots          chan struct{}
	acquireTimeout time.Duration
	waiting        atomic.Int64
	// lastRefusal is when a statement last gave up waiting for a slot
	// (Unix nanoseconds; 0: never).
	lastRefusal atomic.Int64
}

func newGuard(drv dialect.Driver, size int, acquireTimeout time.Duration) *guard {
	return &guard{Driver: drv, slots: make(chan struct{}, size), acquireTimeout: acquireTimeout}
}

// acquire takes a slot, waiting at most acquireTimeout for one, and no
// longer than what is left of the request's patience (internal/patience:
// the acquire timeout is what a request waits in all, whatever its number
// of statements); the returned func gives it back (once, however often it
// is called).
func (g *guard) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.releaser(), nil
	default:
	}
	wait := waitbudget.Allow(ctx, g.acquireTimeout)
	if wait <= 0 {
		return nil, g.refuse()
	}
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	start := time.Now()
	defer func() { waitbudget.Spend(ctx, time.Since(start)) }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.releaser(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, g.refuse()
	}
}

// refuse is the error of a statement that found no free connection in its
// request's time to wait for one.
func (g *guard) refuse() error {
	g.lastRefusal.Store(time.Now().UnixNano())
	return &apperr.Error{Code: apperr.Unavailable,
		Message: fmt.Sprintf("the database is busy: all %d connections stayed in use for as long as a request waits for one (%s); try again shortly", cap(g.slots), g.acquireTimeout)}
}

// AcquireTimeout is how long a request may wait, in all, for database
// connections before it is told the database is busy.
func (s *Store) AcquireTimeout() time.Duration { return s.guard.acquireTimeout }

func (g *guard) releaser() func() {
	var once sync.Once
	return func() { once.Do(func() { <-g.slots }) }
}

// busy reports how many slots are taken and how many callers wait for one,
// and whether a caller gave up waiting within the last acquire timeout.
func (g *guard) busy() (inUse, size int, waiting int64, refusing bool) {
	last := g.lastRefusal.Load()
	refusing = last != 0 && time.Since(time.Unix(0, last)) < g.acquireTimeout
	return len(g.slots), cap(g.slots), g.waiting.Load(), refusing
}

// Each statement runs within what is left of its request's database time
// (internal/dbtime), counted from when it has its connection.
func (g *guard) Exec(ctx context.Context, query string, args, v any) error {
	release, err := g.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return runExec(ctx, g.Driver.Exec, query, args, v)
}

// Query holds its slot until the rows are closed: the connection is busy
// until then.
func (g *guard) Query(ctx context.Context, query string, args, v any) error {
	release, err := g.acquire(ctx)
	if err != nil {
		return err
	}
	return runQuery(ctx, g.Driver.Query, release, query, args, v)
}

// runExec runs a statement of ctx's request within its database time.
func runExec(ctx context.Context, run func(context.Context, string, any, any) error, statement string, args, v any) error {
	args = millisecondTimes(args)
	stmt, finish, err := dbtime.Start(ctx)
	if err != nil {
		return err
	}
	return classify(ctx, finish(run(stmt, statement, args, v)))
}

// runQuery runs a query of ctx's request within its database time, which its
// rows spend until they are closed; release, when set, is called then too.
func runQuery(ctx context.Context, run func(context.Context, string, any, any) error, release func(), statement string, args, v any) error {
	if release == nil {
		release = func() {}
	}
	args = millisecondTimes(args)
	stmt, finish, err := dbtime.Start(ctx)
	if err != nil {
		release()
		return err
	}
	if err := run(stmt, statement, args, v); err != nil {
		release()
		return classify(ctx, finish(err))
	}
	rows, ok := v.(*entsql.Rows)
	if !ok || rows.ColumnScanner == nil {
		release()
		return classify(ctx, finish(nil))
	}
	rows.ColumnScanner = &guardedRows{ColumnScanner: rows.ColumnScanner, ctx: ctx, release: release, finish: finish}
	return nil
}

func (g *guard) Tx(ctx context.Context) (dialect.Tx, error) {
	return g.BeginTx(ctx, nil)
}

// BeginTx holds its slot until the transaction ends.
func (g *guard) BeginTx(ctx context.Context, opts *entsql.TxOptions) (dialect.Tx, error) {
	release, err := g.acquire(ctx)
	if err != nil {
		return nil, err
	}
	var tx dialect.Tx
	if b, ok := g.Driver.(interface {
		BeginTx(context.Context, *entsql.TxOptions) (dialect.Tx, error)
	}); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = g.Driver.Tx(ctx)
	}
	if err != nil {
		release()
		return nil, classify(ctx, err)
	}
	return &guardedTx{Tx: tx, ctx: ctx, release: release}, nil
}

type guardedTx struct {
	dialect.Tx
	ctx     context.Context
	release func()
}

// Unwrap is the transaction it wraps, for (*ent.Tx).SQLTx: River inserts
// a job in the *sql.Tx underneath.
func (t *guardedTx) Unwrap() dialect.Tx { return t.Tx }

func (t *guardedTx) Exec(ctx context.Context, statement string, args, v any) error {
	return runExec(ctx, t.Tx.Exec, statement, args, v)
}

func (t *guardedTx) Query(ctx context.Context, statement string, args, v any) error {
	return runQuery(ctx, t.Tx.Query, nil, statement, args, v)
}

// Commit says of a commit the database did not answer that the write may
// have been saved: the COMMIT may have reached it before the connection was
// lost. A write sent again under its client-chosen ids is then safe (it
// answers the record made, or makes it), which the message tells. A refusal
// the database answered (a serialization failure, SQLite busy) saved nothing
// and keeps its message.
func (t *guardedTx) Commit() error {
	defer t.release()
	err := classify(t.ctx, t.Tx.Commit())
	e, outage := errors.AsType[*apperr.Error](err)
	_, pgAnswered := errors.AsType[*pgconn.PgError](err)
	_, sqliteAnswered := errors.AsType[*sqlite.Error](err)
	if outage && e.Code == apperr.Unavailable && !pgAnswered && !sqliteAnswered {
		return &apperr.Error{Code: apperr.Unavailable, Cause: err, Message: CommitUnanswered}
	}
	return err
}

// CommitUnanswered is the message of a write whose commit the database did
// not answer.
const CommitUnanswered = "the database became unavailable as the write was committed, which it may have saved: " +
	"send the same request again (the same ids: createInventory's id, addItemPhoto's photoId), which answers the record if it was saved and makes it if not"

func (t *guardedTx) Rollback() error {
	defer t.release()
	return classify(t.ctx, t.Tx.Rollback())
}

type guardedRows struct {
	entsql.ColumnScanner
	ctx     context.Context
	release func()
	// finish ends the rows' statement's database time (dbtime.Start).
	finish func(error) error
	// err is what the rows ended with, as finish said it.
	err      error
	finished bool
}

func (r *guardedRows) Close() error {
	defer r.release()
	err := r.ColumnScanner.Close()
	r.end(r.ColumnScanner.Err())
	return err
}

func (r *guardedRows) Err() error {
	if err := r.ColumnScanner.Err(); err != nil {
		return classify(r.ctx, r.end(err))
	}
	return nil
}

// end finishes the statement's database time once, with err.
func (r *guardedRows) end(err error) error {
	if !r.finished {
		r.finished = true
		r.err = r.finish(err)
	}
	if err != nil {
		return r.err
	}
	return nil
}

// classify returns err as apperr.Unavailable when it says the database could
// not answer, rather than that the statement was wrong. A request whose own
// context ended keeps its error: that is its deadline or its client, not the
// database.
func classify(ctx context.Context, err error) error {
	if dbtime.Stopped(err) {
		return err // said already: the request's database time, not the database's bound
	}
	if err != nil && ctx.Err() == nil && StatementTimedOut(err) {
		return &apperr.Error{Code: apperr.DeadlineExceeded, Cause: err,
			Message: "a statement ran past the database's time bound and was stopped: ask for less, or try again later"}
	}
	if err == nil || ctx.Err() != nil || !Unavailable(err) {
		return err
	}
	return &apperr.Error{Code: apperr.Unavailable, Message: "the database is unavailable: try again shortly", Cause: err}
}

// StatementTimedOut reports whether PostgreSQL cancelled err's statement
// (query_canceled, 57014): past its statement_timeout (WithStatementTimeout),
// or on a cancel request. With the request's context still alive, that is
// the database's time bound, not the request's: DEADLINE_EXCEEDED all the
// same, never INTERNAL.
func StatementTimedOut(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == "57014"
}

// Unavailable reports whether err is the database failing to answer: it is
// unreachable, restarting, shutting down, out of connections or resources,
// or (SQLite) locked by another writer past the busy timeout.
func Unavailable(err error) bool {
	// A context that ended is the caller's deadline or its client gone, not
	// the database: context.DeadlineExceeded would otherwise pass for a
	// net.Error timeout below.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if e, ok := errors.AsType[*apperr.Error](err); ok {
		return e.Code == apperr.Unavailable
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch class := pgErr.Code[:2]; {
		case class == "08", // connection exception
			class == "53",                                                       // insufficient resources
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // admin or crash shutdown, cannot connect now
			pgErr.Code == "40001", pgErr.Code == "40P01": // serialization failure, deadlock: retrying succeeds
			return true
		}
		return false
	}
	if sqliteErr, ok := errors.AsType[*sqlite.Error](err); ok {
		switch sqliteErr.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
		return false
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// millisecondTimes are args with every timestamp cut to the millisecond:
// the one precision of every time the service keeps and answers (RFC 3339
// with milliseconds, scalar.TimeLayout), whatever wrote it, since every
// statement passes here; a time sent back from an answer then finds the
// record it came from. args is copied only when it holds a time.
func millisecondTimes(args any) any {
	list, ok := args.([]any)
	if !ok {
		return args
	}
	var out []any
	for i, a := range list {
		var cut any
		switch t := a.(type) {
		case time.Time:
			if t.Nanosecond()%int(time.Millisecond) == 0 {
				continue
			}
			cut = t.Truncate(time.Millisecond)
		case *time.Time:
			if t == nil || t.Nanosecond()%int(time.Millisecond) == 0 {
				continue
			}
			c := t.Truncate(time.Millisecond)
			cut = &c
		default:
			continue
		}
		if out == nil {
			out = slices.Clone(list)
		}
		out[i] = cut
	}
	if out == nil {
		return args
	}
	return out
}
