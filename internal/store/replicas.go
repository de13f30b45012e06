package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/propertyrecords/inventory/internal/metrics"
)

// DefaultReplicaMaxLag is how far behind the primary a standby may be and
// still serve reads.
const DefaultReplicaMaxLag = 10 * time.Second

// replicaCheckEvery spaces the standbys' health checks.
const replicaCheckEvery = time.Second

// WithReplicas sends reads (statements outside a transaction) to these
// PostgreSQL standbys, in turn among those healthy; writes, transactions and
// migrations go to the primary. A standby that does not answer, or replays
// more than maxLag behind (0: DefaultReplicaMaxLag), is out of rotation until
// a check finds it well again; with none in rotation, reads go to the primary.
func WithReplicas(urls []string, maxLag time.Duration) Option {
	return func(o *options) { o.replicas, o.replicaMaxLag = urls, maxLag }
}

// replica is one standby and what its last check found.
type replica struct {
	name    string // its address without credentials, for logs and /readyz
	db      *sql.DB
	drv     dialect.Driver
	healthy atomic.Bool
	mu      sync.Mutex
	lag     time.Duration
	problem string
}

// router is the driver of a store with standbys: ent's one data path,
// choosing a database per statement (ent takes one driver; a router is the
// way its docs give for read replicas).
type router struct {
	dialect.Driver // the primary's: Exec, Tx, Close
	replicas       []*replica
	next           atomic.Uint64
	maxLag         time.Duration
	stop           chan struct{}
	stopped        sync.WaitGroup
}

func newRouter(primary dialect.Driver, replicas []*replica, maxLag time.Duration) *router {
	r := &router{Driver: primary, replicas: replicas, maxLag: maxLag, stop: make(chan struct{})}
	r.checkAll()
	r.stopped.Add(1)
	go r.watch()
	return r
}

// Query runs a read on the next healthy standby; one that fails for a
// reason of its own (not the request's end) leaves the rotation and the read
// goes on to the next, the primary last.
func (r *router) Query(ctx context.Context, query string, args, v any) error {
	start := r.next.Add(1)
	for i := range r.replicas {
		rep := r.replicas[(int(start)+i)%len(r.replicas)]
		if !rep.healthy.Load() {
			continue
		}
		err := rep.drv.Query(ctx, query, args, v)
		if err == nil || ctx.Err() != nil || !Unavailable(err) {
			return err
		}
		rep.setProblem(err.Error())
	}
	return r.Driver.Query(ctx, query, args, v)
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

func (r *router) checkAll() {
	var wg sync.WaitGroup
	for _, rep := range r.replicas {
		wg.Add(1)
		go func() { defer wg.Done(); rep.check(r.maxLag) }()
	}
	wg.Wait()
}

// check asks the standby how far its replay is behind: nothing when it has
// replayed all it received (an idle primary sends nothing, and the time of
// the last replay then only tells how long nothing happened), else the age of
// its last replayed transaction.
func (rep *replica) check(maxLag time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), replicaCheckEvery)
	defer cancel()
	var standby bool
	var lagSeconds float64
	err := rep.db.QueryRowContext(ctx, `SELECT pg_is_in_recovery(),
		CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
		     ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END`).Scan(&standby, &lagSeconds)
	lag := time.Duration(lagSeconds * float64(time.Second))
	switch {
	case err != nil:
		rep.setProblem("unreachable: " + err.Error())
	case !standby:
		rep.setProblem("not a standby (pg_is_in_recovery is false): it would serve reads a failover may have left behind")
	case lag > maxLag:
		rep.setProblem(fmt.Sprintf("replaying %s behind, over the %s allowed", lag.Round(time.Millisecond), maxLag))
	default:
		rep.mu.Lock()
		rep.lag, rep.problem = lag, ""
		rep.mu.Unlock()
		rep.healthy.Store(true)
	}
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
		name, db, _, err := openPostgres(raw, o)
		if err != nil {
			return nil, err
		}
		out = append(out, &replica{name: Redacted(raw), db: db, drv: newGuard(entsql.OpenDB(name, db), o.poolSize, o.acquireTimeout)})
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
