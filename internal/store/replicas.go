package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/dbtime"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// DefaultReplicaMaxLag is how far behind the primary a standby may be and
// still serve reads.
const DefaultReplicaMaxLag = 10 * time.Second

// DefaultReplicaTimeout bounds a statement on a standby: one that has not
// answered by then is taken for frozen, leaves the rotation, and the
// statement runs on the primary. Well under a request's deadline, so that
// the request still has time for it; well over what a statement of a
// request priced within its budget takes.
const DefaultReplicaTimeout = 2 * time.Second

// replicaCheckEvery spaces the standbys' health checks.
const replicaCheckEvery = time.Second

// sampleHistory is how much longer than the max lag the primary's positions
// are kept: a standby further behind reads as that far (at least).
const sampleHistory = 5 * time.Minute

// WithReplicas sends reads to these PostgreSQL standbys, in turn among those
// healthy; writes, transactions and migrations go to the primary. A standby
// that does not answer, whose WAL receiver is not streaming, or that has not
// replayed what the primary had written maxLag ago (0:
// DefaultReplicaMaxLag), is out of rotation until a check finds it well
// again; with none in rotation, reads go to the primary.
func WithReplicas(urls []string, maxLag time.Duration) Option {
	return func(o *options) { o.replicas, o.replicaMaxLag = urls, maxLag }
}

// WithReplicaTimeout bounds each statement on a standby (0:
// DefaultReplicaTimeout).
func WithReplicaTimeout(d time.Duration) Option {
	return func(o *options) { o.replicaTimeout = d }
}

// replica is one standby and what its last check found.
type replica struct {
	name     string // its address without credentials, for logs and /readyz
	db       *sql.DB
	drv      dialect.Driver
	healthy  atomic.Bool
	checking atomic.Bool // a check is under way: a frozen standby's checks do not pile up
	// replayed is the WAL position its last check found replayed.
	replayed atomic.Int64
	mu       sync.Mutex
	lag      time.Duration
	problem  string
}

// walSample is how far the primary had written (and flushed: what a standby
// can have received) at a time.
type walSample struct {
	at  time.Time
	lsn int64
}

// router is the driver of a store with standbys: ent's one data path,
// choosing a database per statement (ent takes one driver; a router is the
// way its docs give for read replicas).
type router struct {
	dialect.Driver // the primary's: Exec, Tx, Close
	primary        *sql.DB
	replicas       []*replica
	next           atomic.Uint64
	maxLag         time.Duration
	timeout        time.Duration
	stop           chan struct{}
	stopped        sync.WaitGroup

	mu sync.Mutex
	// samples of the primary's position over the last maxLag and
	// sampleHistory, oldest first: a standby is as stale as the newest one it has
	// replayed is old.
	samples []walSample
	// primaryLost: the primary's last check failed.
	primaryLost bool
	// written is, by company, the primary's position after its last write
	// and when: its reads go where that has been replayed.
	written map[uuid.UUID]walSample
}

func newRouter(primary dialect.Driver, primaryDB *sql.DB, replicas []*replica, maxLag, timeout time.Duration) *router {
	r := &router{Driver: primary, primary: primaryDB, replicas: replicas, maxLag: maxLag, timeout: timeout, stop: make(chan struct{}),
		written: map[uuid.UUID]walSample{}}
	r.checkAll()
	r.stopped.Wait() // the first checks, so that Open returns with the standbys in rotation
	r.stopped.Add(1)
	go r.watch()
	return r
}

// A read session holds one request's reads to one database: the standby
// its first read went to, or the primary from the moment that standby
// fails, falls behind, or the request writes. Standbys replay at different
// points; read in turn across them, one answer mixed what two of them had
// replayed (a field old, another new). Within a session reads never go
// back in time: a standby's replay and the primary only move forward, and
// the primary is ahead of every standby.
type readSession struct {
	mu     sync.Mutex
	chosen bool
	on     *replica // nil: the primary
}

type readSessionKey struct{}
type readLatestKey struct{}

// WithReadSession makes ctx's reads one session (a request's).
func WithReadSession(ctx context.Context) context.Context {
	return context.WithValue(ctx, readSessionKey{}, &readSession{})
}

// ReadLatest makes ctx's reads see everything the primary has committed:
// for decisions that grant access (an API key, its revocation), which no
// standby's lag may delay. While the primary is down they read a standby:
// nothing can be revoked then, and a standby serves only what it had
// replayed of the primary's last moments.
func ReadLatest(ctx context.Context) context.Context {
	return context.WithValue(ctx, readLatestKey{}, true)
}

func (s *readSession) standby(r *router, need int64) *replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.chosen {
		s.chosen, s.on = true, r.pick(need)
	}
	return s.on
}

func (s *readSession) toPrimary() {
	s.mu.Lock()
	s.chosen, s.on = true, nil
	s.mu.Unlock()
}

// sessionOf is ctx's read session, nil outside a request.
func sessionOf(ctx context.Context) *readSession {
	s, _ := ctx.Value(readSessionKey{}).(*readSession)
	return s
}

// writing moves ctx's session to the primary: a request reads what it
// writes from then on.
func writing(ctx context.Context) {
	if s := sessionOf(ctx); s != nil {
		s.toPrimary()
	}
}

// Query runs a read: on the primary when ctx must read the latest; on its
// session's standby; else on the next healthy standby. A standby that fails
// for a reason of its own (not the request's end), or does not answer within
// the replica timeout, leaves the rotation, and the read runs on the primary;
// should the primary fail too (it is down), on the other standbys in turn.
func (r *router) Query(ctx context.Context, query string, args, v any) error {
	if latest, _ := ctx.Value(readLatestKey{}).(bool); latest {
		return r.onPrimary(ctx, nil, query, args, v)
	}
	if !selects(query) {
		// ent writes through Query too (INSERT … RETURNING of an upsert):
		// a standby would refuse it, and the rest of the request must see it.
		writing(ctx)
		if err := r.Driver.Query(ctx, query, args, v); err != nil {
			return err
		}
		r.noteWrite(ctx)
		return nil
	}
	var rep *replica
	need := r.mustHave(ctx)
	session := sessionOf(ctx)
	if session != nil {
		rep = session.standby(r, need)
	} else {
		rep = r.pick(need)
	}
	if rep != nil && rep.healthy.Load() {
		if err, answered := r.onStandby(ctx, rep, query, args, v); answered {
			return err
		}
	}
	if session != nil && rep != nil {
		session.toPrimary()
	}
	return r.onPrimary(ctx, rep, query, args, v)
}

// selects reports whether query only reads: a SELECT.
func selects(query string) bool {
	query = strings.TrimLeft(query, " \t\n(")
	return len(query) >= 6 && strings.EqualFold(query[:6], "SELECT")
}

// Exec and Tx write: on the primary, and a session's reads after them too,
// so that a request reads what it wrote; the company's later requests read
// where the write has been replayed (mustHave).
func (r *router) Exec(ctx context.Context, query string, args, v any) error {
	writing(ctx)
	if err := r.Driver.Exec(ctx, query, args, v); err != nil {
		return err
	}
	r.noteWrite(ctx)
	return nil
}

func (r *router) Tx(ctx context.Context) (dialect.Tx, error) {
	writing(ctx)
	tx, err := r.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return &notedTx{Tx: tx, ctx: ctx, r: r}, nil
}

// notedTx notes its company's write once it commits.
type notedTx struct {
	dialect.Tx
	ctx context.Context
	r   *router
}

// Unwrap is the transaction it wraps, for (*ent.Tx).SQLTx: River inserts
// a job in the *sql.Tx underneath.
func (t *notedTx) Unwrap() dialect.Tx { return t.Tx }

func (t *notedTx) Commit() error {
	if err := t.Tx.Commit(); err != nil {
		return err
	}
	t.r.noteWrite(t.ctx)
	return nil
}

// noteWrite remembers where the primary's WAL is after a company's write:
// flushed at or past the write's commit (PostgreSQL's default,
// synchronous_commit on, flushes a commit before it returns; the insert
// position can stand past what is ever flushed while nothing is written). Writes without a company (imports, the
// generator) are no caller's to read back.
func (r *router) noteWrite(ctx context.Context) {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return
	}
	at := time.Now()
	posCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replicaCheckEvery)
	defer cancel()
	var lsn int64
	if err := r.primary.QueryRowContext(posCtx, `SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&lsn); err != nil {
		lsn = math.MaxInt64 // unknown: the primary until the mark expires
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.written[company]; !ok || prev.lsn < lsn {
		r.written[company] = walSample{at, lsn}
	}
}

// mustHave is the WAL position a standby must have replayed to serve ctx's
// reads: its company's last write, for as long as a standby in rotation
// might not have it (one check past the max lag); 0 when any will do.
func (r *router) mustHave(ctx context.Context) int64 {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[company]
	if !ok {
		return 0
	}
	if time.Since(w.at) > r.maxLag+2*replicaCheckEvery {
		delete(r.written, company)
		return 0
	}
	return w.lsn
}

// pick is the next healthy standby, in turn, that has replayed need; nil
// when none is.
func (r *router) pick(need int64) *replica {
	start := r.next.Add(1)
	for i := range r.replicas {
		if rep := r.replicas[(int(start)+i)%len(r.replicas)]; rep.healthy.Load() && rep.replayed.Load() >= need {
			return rep
		}
	}
	return nil
}

// onStandby runs a read on rep. answered is false when the standby failed
// (or froze) rather than the statement: the read is then to be run
// elsewhere.
func (r *router) onStandby(ctx context.Context, rep *replica, query string, args, v any) (err error, answered bool) {
	// The bound covers the statement until its first rows arrive: a
	// frozen server answers nothing at all. Cancelled once the rows are
	// being read, it would close them under the caller.
	bounded, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(r.timeout, cancel)
	began := time.Now()
	err = rep.drv.Query(bounded, query, args, v)
	if !timer.Stop() && ctx.Err() == nil {
		if rows, ok := v.(*entsql.Rows); ok && err == nil && rows.ColumnScanner != nil {
			rows.Close()
		}
		rep.setProblem(fmt.Sprintf("a statement had no answer within %s", r.timeout))
		dbtime.Refund(ctx, time.Since(began))
		return nil, false
	}
	// The request's database time (internal/dbtime) may run out before the
	// replica timeout: a heavy statement, rightly stopped, or a frozen
	// standby, which must not fail every read sent to it until the next
	// check. A standby that does not answer a ping is taken for frozen: the
	// time waited on it is given back, and the read runs elsewhere.
	if err != nil && dbtime.Stopped(err) && ctx.Err() == nil && !rep.answers(ctx) {
		rep.setProblem(fmt.Sprintf("a statement had no answer within its database time, nor a ping within %s", pingWait))
		dbtime.Refund(ctx, time.Since(began))
		return nil, false
	}
	if err != nil && ctx.Err() == nil && Unavailable(err) {
		rep.setProblem(err.Error())
		return nil, false
	}
	return err, true
}

// onPrimary runs a read on the primary; when the primary cannot answer, on
// each healthy standby but tried in turn (none tried twice).
func (r *router) onPrimary(ctx context.Context, tried *replica, query string, args, v any) error {
	err := r.Driver.Query(ctx, query, args, v)
	if err == nil || ctx.Err() != nil || !Unavailable(err) {
		return err
	}
	start := r.next.Add(1)
	for i := range r.replicas {
		rep := r.replicas[(int(start)+i)%len(r.replicas)]
		if rep == tried || !rep.healthy.Load() {
			continue
		}
		if err, answered := r.onStandby(ctx, rep, query, args, v); answered {
			return err
		}
	}
	return err
}

func (r *router) watch() {
	defer r.stopped.Done()
	t := time.NewTicker(replicaCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.checkAll()
		}
	}
}

// checkAll samples the primary's position, then checks each standby
// against it, without waiting: a frozen standby must not hold up the
// others' checks, nor its own next ones pile up.
func (r *router) checkAll() {
	lsn, err := r.primaryPosition()
	now := time.Now()
	r.mu.Lock()
	r.primaryLost = err != nil
	if err == nil {
		if n := len(r.samples); n > 0 && r.samples[n-1].lsn == lsn {
			r.samples[n-1].at = now // nothing written since: caught up to it is caught up to now
		} else {
			r.samples = append(r.samples, walSample{now, lsn})
		}
		// Beyond maxLag, samples only tell the metrics how far behind a
		// standby out of rotation is.
		keep := now.Add(-r.maxLag - sampleHistory)
		for len(r.samples) > 1 && r.samples[0].at.Before(keep) {
			r.samples = r.samples[1:]
		}
	}
	samples, lost := slices.Clone(r.samples), r.primaryLost
	r.mu.Unlock()
	for _, rep := range r.replicas {
		if !rep.checking.CompareAndSwap(false, true) {
			continue
		}
		r.stopped.Add(1)
		go func() {
			defer r.stopped.Done()
			defer rep.checking.Store(false)
			rep.check(r.maxLag, samples, lost)
		}()
	}
}

// primaryPosition is how far the primary has flushed its WAL.
func (r *router) primaryPosition() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), replicaCheckEvery)
	defer cancel()
	var lsn int64
	err := r.primary.QueryRowContext(ctx, `SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&lsn)
	return lsn, err
}

// staleness is how old the newest of the primary's positions is that the
// standby has replayed, at the time at: what the primary committed since
// then the standby may not show.
func staleness(samples []walSample, replayed int64, at time.Time) time.Duration {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].lsn <= replayed {
			return max(0, at.Sub(samples[i].at))
		}
	}
	return at.Sub(samples[0].at) // behind every sample kept: at least this
}

// check measures the standby against the primary's positions: how far it
// has replayed, and whether its WAL receiver streams. Its own view (received
// against replayed) cannot tell a standby that receives nothing from one
// that is up to date. While the primary is lost, its standbys cannot stream
// from it and nothing new can be committed on it: a standby is then judged
// by what it had replayed when the primary was last seen.
func (rep *replica) check(maxLag time.Duration, samples []walSample, primaryLost bool) {
	ctx, cancel := context.WithTimeout(context.Background(), replicaCheckEvery)
	defer cancel()
	var (
		standby  bool
		replayed int64
		receiver string
	)
	err := rep.db.QueryRowContext(ctx, `SELECT pg_is_in_recovery(),
		COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, -1),
		COALESCE((SELECT status FROM pg_stat_wal_receiver), 'not running')`).Scan(&standby, &replayed, &receiver)
	at := time.Now()
	if primaryLost && len(samples) > 0 {
		at = samples[len(samples)-1].at
	}
	switch {
	case err != nil:
		rep.setProblem("unreachable: " + err.Error())
	case !standby:
		rep.setProblem("not a standby (pg_is_in_recovery is false): it would serve reads a failover may have left behind")
	case len(samples) == 0:
		rep.setProblem("the primary's position is unknown: it has not answered since the start")
	default:
		rep.replayed.Store(replayed)
		lag := staleness(samples, replayed, at)
		rep.mu.Lock()
		rep.lag = lag
		rep.mu.Unlock()
		switch {
		case receiver != "streaming" && !primaryLost:
			rep.setProblem(fmt.Sprintf("its WAL receiver is %s, not streaming: it receives nothing the primary writes", receiver))
		case lag > maxLag:
			rep.setProblem(fmt.Sprintf("it has not replayed what the primary wrote %s ago, over the %s allowed", lag.Round(time.Millisecond), maxLag))
		default:
			rep.mu.Lock()
			rep.problem = ""
			rep.mu.Unlock()
			rep.healthy.Store(true)
		}
	}
}

// pingWait is how long a standby suspected frozen has to answer a ping:
// a live server answers one at once, however busy.
const pingWait = 200 * time.Millisecond

// answers reports whether rep answers a ping within pingWait.
func (rep *replica) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingWait)
	defer cancel()
	return rep.db.PingContext(ctx) == nil
}

func (rep *replica) setProblem(problem string) {
	rep.healthy.Store(false)
	rep.mu.Lock()
	rep.problem = problem
	rep.mu.Unlock()
}

// Close stops the checks and closes the standbys, then the primary.
func (r *router) Close() error {
	close(r.stop)
	r.stopped.Wait()
	var errs []error
	for _, rep := range r.replicas {
		errs = append(errs, rep.db.Close())
	}
	return errors.Join(append(errs, r.Driver.Close())...)
}

// openReplicas opens each standby as Open opens the primary.
func openReplicas(urls []string, o *options) ([]*replica, error) {
	var out []*replica
	for _, raw := range urls {
		if scheme(raw) != "postgres" && scheme(raw) != "postgresql" {
			return nil, fmt.Errorf("store: replica %q: replicas are PostgreSQL standbys (postgres://…)", Redacted(raw))
		}
		name, db, _, _, err := openPostgres(raw, o)
		if err != nil {
			return nil, err
		}
		out = append(out, &replica{name: Redacted(raw), db: db, drv: newGuard(openDriver(name, db), o.poolSize, o.acquireTimeout)})
	}
	return out, nil
}

// Redacted is a database or store address fit for logs: its password
// masked; a plain path as it is.
func Redacted(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}

// ReplicaStatus is what the last check of a standby found.
type ReplicaStatus struct {
	Name    string        `json:"name"`
	Healthy bool          `json:"healthy"`
	Lag     time.Duration `json:"lagNanoseconds"`
	Problem string        `json:"problem,omitempty"`
}

// Replicas reports each standby's state (none without standbys).
func (s *Store) Replicas() []ReplicaStatus {
	if s.router == nil {
		return nil
	}
	var out []ReplicaStatus
	for _, rep := range s.router.replicas {
		rep.mu.Lock()
		out = append(out, ReplicaStatus{Name: rep.name, Healthy: rep.healthy.Load(), Lag: rep.lag, Problem: rep.problem})
		rep.mu.Unlock()
	}
	return out
}

// ReplicaMetrics is Replicas as the metrics read them.
func (s *Store) ReplicaMetrics() []metrics.Replica {
	var out []metrics.Replica
	for _, r := range s.Replicas() {
		out = append(out, metrics.Replica{Name: r.Name, Healthy: r.Healthy, Lag: r.Lag})
	}
	return out
}
