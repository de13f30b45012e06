// Package fairshare shares the service between companies, so that no caller
// can take it from the others: a queue that hands the requests in flight out
// fairly (Queue), and a budget of operation cost per company (Budget).
//
// A company alone may use all the places but a quarter, kept free for the
// others: a company that arrives while another holds its most starts at
// once. When the places are all taken, each one that frees goes to the
// company that has the fewest requests in flight (max-min fairness), so a
// company sending one request is served next however many another has
// queued.
package fairshare

import (
	"context"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

// Queue bounds the requests in flight, sharing them fairly between keys
// (companies). The zero value is not usable; a nil *Queue admits everything.
type Queue struct {
	places    int
	maxQueued int
	maxWait   time.Duration

	mu       sync.Mutex
	inFlight int
	keys     map[string]*keyState
	seq      uint64
}

type keyState struct {
	running int
	waiting []*waiter
}

type waiter struct {
	ready   chan struct{}
	granted bool
	seq     uint64
}

// QueueOptions size a Queue.
type QueueOptions struct {
	// Places is how many requests run at once, every key's together.
	Places int
	// MaxQueued is how many requests of one key may wait for a place; past
	// it a request is refused at once (RATE_LIMITED): its sender has more in
	// flight than it can be given.
	MaxQueued int
	// MaxWait is how long a request waits for a place before it is refused.
	MaxWait time.Duration
}

// NewQueue returns a queue of opts.Places places; nil when Places is 0.
func NewQueue(opts QueueOptions) *Queue {
	if opts.Places <= 0 {
		return nil
	}
	return &Queue{places: opts.Places, maxQueued: max(opts.MaxQueued, 1), maxWait: opts.MaxWait, keys: map[string]*keyState{}}
}

// Acquire waits for a place for key's request, and returns the function
// that gives it back. It fails when key has too many requests waiting
// (RATE_LIMITED), when no place frees within the queue's wait (RATE_LIMITED
// when key has requests running: they are its share; UNAVAILABLE when it
// has none: the service is full), or when ctx ends.
func (q *Queue) Acquire(ctx context.Context, key string) (release func(), err error) {
	if q == nil {
		return func() {}, nil
	}
	q.mu.Lock()
	st := q.keys[key]
	if st == nil {
		st = &keyState{}
		q.keys[key] = st
	}
	if q.inFlight < q.places && st.running < q.perKey() {
		q.inFlight++
		st.running++
		q.mu.Unlock()
		return q.releaser(key), nil
	}
	if len(st.waiting) >= q.maxQueued {
		q.mu.Unlock()
		return nil, &apperr.Error{Code: apperr.RateLimited, RetryAfter: time.Second,
			Message: "too many requests of your company are already waiting: send fewer at once, or retry after the Retry-After seconds"}
	}
	q.seq++
	w := &waiter{ready: make(chan struct{}), seq: q.seq}
	st.waiting = append(st.waiting, w)
	q.mu.Unlock()

	// The wait for a place and those for database connections share the
	// request's patience: together they last at most the acquire timeout.
	start := time.Now()
	defer func() { waitbudget.Spend(ctx, time.Since(start)) }()
	timer := time.NewTimer(max(waitbudget.Allow(ctx, q.maxWait), 0))
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return q.releaser(key), nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-timer.C:
	}
	q.mu.Lock()
	if w.granted { // granted as it gave up: give the place on
		q.mu.Unlock()
		q.releaser(key)()
	} else {
		st.waiting = removeWaiter(st.waiting, w)
		q.forget(key, st)
		q.mu.Unlock()
	}
	if cause != nil {
		if expired, ok := apperr.Expired(ctx); ok {
			return nil, expired
		}
		return nil, cause
	}
	if q.running(key) > 0 {
		return nil, &apperr.Error{Code: apperr.RateLimited, RetryAfter: time.Second,
			Message: "your company's requests fill its share of the service: retry after the Retry-After seconds"}
	}
	return nil, &apperr.Error{Code: apperr.Unavailable, Message: "the service is busy: retry after the Retry-After seconds"}
}

// perKey is the most places one key may hold: all but a quarter (at least
// one), kept for the others, so that a company arriving while another holds
// the rest starts at once instead of waiting for a request of the other's,
// which may run to its deadline.
func (q *Queue) perKey() int {
	return max(q.places-max(1, q.places/4), 1)
}

func (q *Queue) running(key string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if st := q.keys[key]; st != nil {
		return st.running
	}
	return 0
}

// releaser gives key's place back once, to the waiting key with the fewest
// requests running (the longest waiting among equals).
func (q *Queue) releaser(key string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			st := q.keys[key]
			st.running--
			q.inFlight--
			q.forget(key, st)
			next, nextState := q.nextWaiting()
			if next == nil {
				return
			}
			w := nextState.waiting[0]
			nextState.waiting = nextState.waiting[1:]
			nextState.running++
			q.inFlight++
			w.granted = true
			close(w.ready)
		})
	}
}

// nextWaiting picks the key a freed place goes to. Keys with requests
// waiting are few (one per busy company), so a scan is cheap.
func (q *Queue) nextWaiting() (*string, *keyState) {
	var (
		best      *keyState
		bestKey   string
		bestCount = math.MaxInt
		bestSeq   uint64
	)
	for key, st := range q.keys {
		if len(st.waiting) == 0 || st.running >= q.perKey() {
			continue
		}
		if st.running < bestCount || st.running == bestCount && st.waiting[0].seq < bestSeq {
			best, bestKey, bestCount, bestSeq = st, key, st.running, st.waiting[0].seq
		}
	}
	if best == nil {
		return nil, nil
	}
	return &bestKey, best
}

// forget drops a key with nothing running or waiting: the map holds only
// the keys in use, whatever keys clients send.
func (q *Queue) forget(key string, st *keyState) {
	if st.running == 0 && len(st.waiting) == 0 {
		delete(q.keys, key)
	}
}

func removeWaiter(ws []*waiter, w *waiter) []*waiter {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}

// InFlight reports the requests running and waiting, for metrics and tests.
func (q *Queue) InFlight() (running, waiting int) {
	if q == nil {
		return 0, 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, st := range q.keys {
		waiting += len(st.waiting)
	}
	return q.inFlight, waiting
}

type keyCtx struct{}

// WithKey records the key a request is shared under, for the budget
// charged deeper down (graph's cost check).
func WithKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtx{}, key)
}

// KeyFrom is the key WithKey recorded, "" when none was.
func KeyFrom(ctx context.Context) string {
	key, _ := ctx.Value(keyCtx{}).(string)
	return key
}

type placeCtx struct{}

// Place is a request's hold on its place. The server gives the place back
// as soon as the answer starts (a slow client reading a long download holds
// none), unless the request keeps it (KeepPlace).
type Place struct{ kept atomic.Bool }

// WithPlace records the place a request holds, for KeepPlace.
func WithPlace(ctx context.Context) (context.Context, *Place) {
	p := &Place{}
	return context.WithValue(ctx, placeCtx{}, p), p
}

// KeepPlace keeps ctx's request in its place until it returns, though its
// answer has started: a stream that reads the database as it writes (the
// repair CSV) does a request's work all along, and must not let others
// start theirs in its place.
func KeepPlace(ctx context.Context) {
	if p, ok := ctx.Value(placeCtx{}).(*Place); ok {
		p.kept.Store(true)
	}
}

// Kept reports whether the request kept its place (KeepPlace).
func (p *Place) Kept() bool { return p != nil && p.kept.Load() }

// KeyOf is the key r is shared under: its company, the one a credential
// binds or else the one it names (in header mode the gateway sets it, so a
// client cannot spread itself over many), and without one its address.
func KeyOf(r *http.Request) string {
	if id, bound := tenant.Bound(r.Context()); bound {
		return "company:" + id.String()
	}
	if company := r.Header.Get(tenant.Header); company != "" {
		return "company:" + strings.ToLower(company[:min(len(company), 36)])
	}
	if company := r.URL.Query().Get(strings.ToLower(tenant.Header)); company != "" {
		return "company:" + strings.ToLower(company[:min(len(company), 36)])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address:" + host
}
