package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/propertyrecords/inventory/internal/metrics"
)

// progress tells how far a long command (import, generate) is, to each
// audience in its own way: a line redrawn on a terminal, a log line every
// progressLogEvery in logs (where a redrawn line would be noise), and
// gauges on /metrics when --metrics-addr is set.
type progress struct {
	job        *metrics.Job
	terminal   io.Writer // nil when standard error is not a terminal, or quiet
	log        *slog.Logger
	what, unit string
	size       int64 // < 0: unknown

	mu            sync.Mutex
	drawn, logged time.Time
	onScreen      bool
}

// progressLogEvery spaces the progress lines of a command whose standard
// error is a log, not a terminal.
const progressLogEvery = 10 * time.Second

// redrawEvery bounds how often the terminal line is redrawn.
const redrawEvery = 100 * time.Millisecond

func newProgress(std stdio, quiet bool, job *metrics.Job, what, unit string, size int64) *progress {
	p := &progress{job: job, log: slog.Default(), what: what, unit: unit, size: size, logged: time.Now()}
	if f, ok := std.errOut.(*os.File); ok && !quiet && term.IsTerminal(int(f.Fd())) {
		p.terminal = f
	}
	return p
}

func (p *progress) set(done int64) {
	p.job.Done(done)
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	switch {
	case p.terminal != nil && now.Sub(p.drawn) >= redrawEvery:
		p.drawn, p.onScreen = now, true
		fmt.Fprintf(p.terminal, "\r\033[K%s %s", p.what, p.amount(done))
	case p.terminal == nil && now.Sub(p.logged) >= progressLogEvery:
		p.logged = now
		p.log.Info(p.what, "done", done, "size", p.size, "unit", p.unit)
	}
}

// amount is "12.3 MiB of 40.0 MiB (31%)", or "120 of 500 properties (24%)".
func (p *progress) amount(done int64) string {
	format := func(n int64) string { return fmt.Sprintf("%d", n) }
	unit := " " + p.unit
	if p.unit == "bytes" {
		format, unit = func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }, ""
	}
	if p.size <= 0 {
		return format(done) + unit
	}
	return fmt.Sprintf("%s of %s%s (%d%%)", format(done), format(p.size), unit, done*100/p.size)
}

// clear takes the terminal line away, before another line is printed or at
// the end: what stays on screen is the command's summary.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.onScreen {
		fmt.Fprint(p.terminal, "\r\033[K")
		p.onScreen = false
	}
}

// serveMetrics serves /metrics on addr apart from the API, for the server
// and, while they run, for long commands; nil when addr is empty. Close
// stops it.
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (*http.Server, error) {
	if addr == "" {
		return nil, nil
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(listener) }()
	log.Info("serving metrics", "url", "http://"+listener.Addr().String()+"/metrics")
	return srv, nil
}

// serveJobMetrics is serveMetrics for a command: the function it returns
// stops serving (and does nothing when nothing was served).
func serveJobMetrics(addr string, m *metrics.Metrics) (stop func(), err error) {
	srv, err := serveMetrics(addr, m, slog.Default())
	if err != nil || srv == nil {
		return func() {}, err
	}
	return func() { srv.Close() }, nil
}
