package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Drain is the server's way out: once started, /readyz answers 503 so that
// load balancers send no more, and every answer closes its connection, so
// that keep-alive clients open a new one (to another instance) instead of
// sending on one the server is about to close: a request sent on an idle
// connection at the moment it closes fails with EOF, and a POST is not
// retried by clients. It also keeps the requests in flight, so that a
// shutdown that has to cut them can say which.
type Drain struct {
	draining atomic.Bool
	mu       sync.Mutex
	inFlight map[*http.Request]time.Time
	onStart  []func()
}

// OnStart has f called when draining starts: what would otherwise hold
// the shutdown for as long as it lives (a subscription's connection) ends.
func (d *Drain) OnStart(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onStart = append(d.onStart, f)
}

// NewDrain returns a Drain not started.
func NewDrain() *Drain { return &Drain{inFlight: map[*http.Request]time.Time{}} }

// Start starts draining.
func (d *Drain) Start() {
	if d.draining.Swap(true) {
		return
	}
	d.mu.Lock()
	fs := slices.Clone(d.onStart)
	d.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Draining reports whether Start was called.
func (d *Drain) Draining() bool { return d.draining.Load() }

// InFlight describes the requests running now, longest first.
func (d *Drain) InFlight(now time.Time) []string {
	d.mu.Lock()
	type running struct {
		what  string
		since time.Time
	}
	all := make([]running, 0, len(d.inFlight))
	for r, since := range d.inFlight {
		all = append(all, running{r.Method + " " + loggedPath(r), since})
	}
	d.mu.Unlock()
	slices.SortFunc(all, func(a, b running) int { return a.since.Compare(b.since) })
	out := make([]string, len(all))
	for i, r := range all {
		out[i] = fmt.Sprintf("%s (running %s)", r.what, now.Sub(r.since).Round(time.Millisecond))
	}
	return out
}

// Wait waits until no request is in flight, or at most d.
func (d *Drain) Wait(within time.Duration) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		d.mu.Lock()
		running := len(d.inFlight)
		d.mu.Unlock()
		if running == 0 {
			return
		}
	}
}

// CutError is what a shutdown that had to cut requests reports.
func (d *Drain) CutError(waited time.Duration, now time.Time) error {
	running := d.InFlight(now)
	const shown = 5
	list := strings.Join(running[:min(len(running), shown)], ", ")
	if len(running) > shown {
		list += fmt.Sprintf(" and %d more", len(running)-shown)
	}
	return fmt.Errorf("shutdown: %d request(s) still running after waiting %s were cut: %s (a longer --shutdown-timeout lets them finish)", len(running), waited, list)
}

func (d *Drain) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.inFlight[r] = time.Now()
		d.mu.Unlock()
		defer func() {
			d.mu.Lock()
			delete(d.inFlight, r)
			d.mu.Unlock()
		}()
		next.ServeHTTP(&drainingWriter{ResponseWriter: w, drain: d}, r)
	})
}

// drainingWriter closes the connection after an answer whose header is
// written once draining has started. Deciding when the request arrived
// instead left a request that came in just before the drain answered
// keep-alive: its client then sent its next request on a connection the
// shutdown was closing, and got EOF.
type drainingWriter struct {
	http.ResponseWriter
	drain       *Drain
	wroteHeader bool
}

func (w *drainingWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= http.StatusOK {
		w.wroteHeader = true
		if w.drain.Draining() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *drainingWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's own writer
// (flushing, deadlines).
func (w *drainingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what is written so far: answers in parts (@defer) need it.
func (w *drainingWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}
