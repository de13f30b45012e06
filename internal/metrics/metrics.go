// Package metrics is the service's Prometheus instrumentation (the official
// client library), served at /metrics: requests by route and status,
// latencies per route and per GraphQL operation, GraphQL errors by code
// (the query limits' refusals among them), the database pool, and the
// build. Every label has a bounded set of values, whatever clients send.
package metrics

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/buildinfo"
)

// Metrics are one server's instruments, in a registry of their own.
type Metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	operations *prometheus.HistogramVec
	errors     *prometheus.CounterVec
	refusals   *prometheus.CounterVec

	mu    sync.Mutex
	names map[string]bool // the operation names given a label so far
}

// maxOperationNames bounds the operation label: names are the clients' to
// choose; past this many, new ones count as "other".
const maxOperationNames = 200

// New registers the service's instruments, with the Go runtime's, the
// process's and the build's.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inventory_http_requests_total",
			Help: "HTTP requests answered, by route (the endpoint's pattern), method and status."}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "inventory_http_request_duration_seconds",
			Help: "Time to answer an HTTP request, by route.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"route"}),
		operations: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "inventory_graphql_operation_duration_seconds",
			Help:    "Time to run a GraphQL operation, by operation name (anonymous; other past 200 names).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inventory_graphql_errors_total",
			Help: "GraphQL errors answered, by extensions.code."}, []string{"code"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inventory_graphql_limit_refusals_total",
			Help: "Operations refused by the query limits before they ran (size, depth, complexity), by code."}, []string{"code"}),
		names: map[string]bool{},
	}
	build := buildinfo.Read()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inventory_build_info",
		Help:        "Always 1: the build serving, in its labels (version, commit, Go version).",
		ConstLabels: prometheus.Labels{"version": build.Version, "commit": build.Commit, "go_version": build.GoVersion}})
	buildInfo.Set(1)
	m.registry.MustRegister(m.requests, m.latency, m.operations, m.errors, m.refusals, buildInfo,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector())
	return m
}

// WatchDB adds the database pool's statistics, read from stats at each
// scrape: connections open, in use and idle, the pool's size, and the waits
// for a free connection with their total time.
func (m *Metrics) WatchDB(stats func() sql.DBStats) {
	gauge := func(name, help string, read func(sql.DBStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return read(stats()) })
	}
	counter := func(name, help string, read func(sql.DBStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return read(stats()) })
	}
	m.registry.MustRegister(
		gauge("inventory_db_connections_open", "Database connections open.", func(s sql.DBStats) float64 { return float64(s.OpenConnections) }),
		gauge("inventory_db_connections_in_use", "Database connections running a statement.", func(s sql.DBStats) float64 { return float64(s.InUse) }),
		gauge("inventory_db_connections_idle", "Database connections idle in the pool.", func(s sql.DBStats) float64 { return float64(s.Idle) }),
		gauge("inventory_db_connections_max", "The pool's size.", func(s sql.DBStats) float64 { return float64(s.MaxOpenConnections) }),
		counter("inventory_db_waits_total", "Statements that waited for a free connection.", func(s sql.DBStats) float64 { return float64(s.WaitCount) }),
		counter("inventory_db_wait_seconds_total", "Time statements waited for a free connection.", func(s sql.DBStats) float64 { return s.WaitDuration.Seconds() }),
	)
}

// WatchShare adds the fair share's requests running and waiting for a
// place (internal/fairshare), read at each scrape.
func (m *Metrics) WatchShare(inFlight func() (running, waiting int)) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_requests_running", Help: "Requests holding a place of the fair share."},
			func() float64 { running, _ := inFlight(); return float64(running) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_requests_waiting", Help: "Requests waiting for a place of the fair share."},
			func() float64 { _, waiting := inFlight(); return float64(waiting) }),
	)
}

// WatchLive adds the live updates' figures, read at each scrape: the
// connections open, the subscriptions, and the events delivered and
// dropped (a subscriber too slow is cut, its events dropped).
func (m *Metrics) WatchLive(open func() int, hub func() LiveStats) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_live_connections", Help: "Connections carrying subscriptions (WebSocket and SSE)."},
			func() float64 { return float64(open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_live_subscriptions", Help: "Subscriptions open."},
			func() float64 { return float64(hub().Subscribers) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_live_events_delivered_total", Help: "Events handed to subscriptions."},
			func() float64 { return float64(hub().Delivered) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_live_events_dropped_total", Help: "Events dropped: their subscriber had fallen too far behind and was cut."},
			func() float64 { return float64(hub().Dropped) }),
	)
	// How the events are followed: 1 for the mode in use (listen: told by
	// PostgreSQL's NOTIFY; polling: read every poll, as on SQLite or behind
	// a transaction pooler), 0 for the other.
	for _, mode := range []string{"listen", "polling"} {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_live_feed",
			Help: "How this instance follows the events for live updates (1: the mode in use).", ConstLabels: prometheus.Labels{"mode": mode}},
			func() float64 {
				if hub().Mode == mode {
					return 1
				}
				return 0
			}))
	}
}

// WatchSharedLimits adds whether the limits are kept in Redis
// (internal/sharedlimit), read at each scrape: 1 while they are, 0 during
// an outage, when this instance keeps its own; the outages, each counted
// once as it starts; and the decisions taken on this instance's own
// counters meanwhile.
func (m *Metrics) WatchSharedLimits(read func() SharedLimits) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_shared_limits_redis",
			Help: "Whether the rate limits, cost budgets and subscription caps are kept in Redis for every instance (1), or per instance while Redis does not answer (0)."},
			func() float64 {
				if read().Shared {
					return 1
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_shared_limits_fallbacks_total",
			Help: "Times this instance fell back to its own counters because Redis did not answer within its timeout."},
			func() float64 { return float64(read().Outages) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_shared_limits_local_decisions_total",
			Help: "Limit decisions taken on this instance's own counters while Redis did not answer."},
			func() float64 { return float64(read().LocalDecisions) }),
	)
}

// SharedLimits are the shared limits' figures (internal/sharedlimit).
type SharedLimits struct {
	Shared                  bool
	Outages, LocalDecisions int64
}

// LiveStats are the live updates' figures (internal/live).
type LiveStats struct {
	Subscribers        int
	Delivered, Dropped int64
	// Mode is how the events are followed: "listen" or "polling".
	Mode string
}

// Replica is what the metrics read of a standby at each scrape.
type Replica struct {
	Name    string
	Healthy bool
	Lag     time.Duration
}

// replicaCollector reads the standbys' state at each scrape.
type replicaCollector struct {
	read             func() []Replica
	healthy, lagDesc *prometheus.Desc
}

func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.healthy; ch <- c.lagDesc }

func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.read() {
		healthy := 0.0
		if r.Healthy {
			healthy = 1
		}
		ch <- prometheus.MustNewConstMetric(c.healthy, prometheus.GaugeValue, healthy, r.Name)
		ch <- prometheus.MustNewConstMetric(c.lagDesc, prometheus.GaugeValue, r.Lag.Seconds(), r.Name)
	}
}

// WatchReplicas adds each standby's rotation state and replay lag, read from
// read at each scrape (the standbys are a setting: a bounded label).
func (m *Metrics) WatchReplicas(read func() []Replica) {
	m.registry.MustRegister(replicaCollector{read: read,
		healthy: prometheus.NewDesc("inventory_db_replica_healthy", "Whether a standby is in the read rotation (1) or out of it (0).", []string{"replica"}, nil),
		lagDesc: prometheus.NewDesc("inventory_db_replica_lag_seconds", "How far behind the primary a standby replayed at its last check.", []string{"replica"}, nil),
	})
}

// BlobStore is what the metrics read of the blob store at each scrape.
type BlobStore struct {
	// Refusing is why it refuses writes (internal/files' Refused*); "" while
	// it takes them.
	Refusing string
	// Refused counts the writes it refused, by reason.
	Refused map[string]int64
}

// blobCollector reads the blob store's write state at each scrape.
type blobCollector struct {
	read              func() BlobStore
	writable, refused *prometheus.Desc
}

func (c blobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.writable; ch <- c.refused }

func (c blobCollector) Collect(ch chan<- prometheus.Metric) {
	state := c.read()
	writable := 1.0
	if state.Refusing != "" {
		writable = 0
	}
	ch <- prometheus.MustNewConstMetric(c.writable, prometheus.GaugeValue, writable)
	for reason, n := range state.Refused {
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(n), reason)
	}
}

// WatchBlobStore adds whether the blob store takes writes and the writes it
// refused by reason (a fixed set), read from read at each scrape: a full or
// read-only store is an outage of uploads, though every read is served.
func (m *Metrics) WatchBlobStore(read func() BlobStore) {
	m.registry.MustRegister(blobCollector{read: read,
		writable: prometheus.NewDesc("inventory_blob_store_writable",
			"Whether the blob store takes writes (1), or refused the last one (0: full, read-only, denied, unusable or unreachable).", nil, nil),
		refused: prometheus.NewDesc("inventory_blob_store_refused_writes_total",
			"Writes of photos and PDFs the blob store refused, by reason (full, read_only, denied, unusable, unreachable).", []string{"reason"}, nil),
	})
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

type ctxKey struct{}

// From returns the metrics a request records to, or nil (recording to nil
// does nothing).
func From(ctx context.Context) *Metrics {
	m, _ := ctx.Value(ctxKey{}).(*Metrics)
	return m
}

// WithContext makes ctx record to m (see From).
func (m *Metrics) WithContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, m)
}

// Request counts and times an answered request under its route (the
// pattern of the handler it reached: never the raw path, whose values a
// client chooses).
func (m *Metrics) Request(route, verb string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, method(verb), strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(took.Seconds())
}

// method bounds the method label to the ones HTTP defines.
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// Operation records the time a GraphQL operation took.
func (m *Metrics) Operation(name string, took time.Duration) {
	if m == nil {
		return
	}
	m.operations.WithLabelValues(m.operationLabel(name)).Observe(took.Seconds())
}

func (m *Metrics) operationLabel(name string) string {
	if name == "" {
		return "anonymous"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.names[name] {
		if len(m.names) >= maxOperationNames || len(name) > 64 {
			return "other"
		}
		m.names[name] = true
	}
	return name
}

// GraphQLError counts an error answered with code; the query limits' codes
// count as refusals too.
func (m *Metrics) GraphQLError(code string) {
	if m == nil {
		return
	}
	if code == "" {
		code = "none"
	}
	if apperr.LimitRefusal(code) {
		m.refusals.WithLabelValues(code).Inc()
	}
	if len(code) > 40 {
		code = "other"
	}
	m.errors.WithLabelValues(code).Inc()
}

// Job is the progress of a long command (import, generate) on the /metrics
// it serves while it runs: how much is done, of how much when that is
// known, in the job's unit, and the records it refused.
type Job struct {
	done     prometheus.Gauge
	rejected prometheus.Counter
}

// Job registers the progress of the job name, counted in unit; size < 0
// means unknown (an import from standard input), and leaves its gauge out.
func (m *Metrics) Job(name, unit string, size int64) *Job {
	labels := prometheus.Labels{"job": name, "unit": unit}
	j := &Job{
		done: prometheus.NewGauge(prometheus.GaugeOpts{Name: "inventory_job_done",
			Help: "How much of a running import or generate is done, in its unit.", ConstLabels: labels}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "inventory_job_rejected_records_total",
			Help: "Records a running import refused.", ConstLabels: prometheus.Labels{"job": name}}),
	}
	m.registry.MustRegister(j.done, j.rejected)
	if size >= 0 {
		total := prometheus.NewGauge(prometheus.GaugeOpts{Name: "inventory_job_size",
			Help: "How much a running import or generate has to do in all, in its unit.", ConstLabels: labels})
		total.Set(float64(size))
		m.registry.MustRegister(total)
	}
	return j
}

// Done records how much is done.
func (j *Job) Done(n int64) { j.done.Set(float64(n)) }

// Rejected counts a refused record.
func (j *Job) Rejected() { j.rejected.Inc() }

// JobKey is a kind of job and a state of River's (available, running,
// retryable, …): both fixed sets, bounded labels.
type JobKey struct{ Kind, State string }

// Jobs are the durable jobs' figures (internal/jobs), read at each scrape.
type Jobs struct {
	// Count is the jobs in the table by kind and state.
	Count map[JobKey]int
	// OldestAvailable is how long the oldest job due has waited for a
	// worker (0: none waits): a backlog, or no instance working jobs.
	OldestAvailable time.Duration
}

type jobsCollector struct {
	read          func() Jobs
	count, oldest *prometheus.Desc
}

func (c jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.count; ch <- c.oldest }

func (c jobsCollector) Collect(ch chan<- prometheus.Metric) {
	jobs := c.read()
	for key, n := range jobs.Count {
		ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(n), key.Kind, key.State)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, jobs.OldestAvailable.Seconds())
}

// WatchJobs adds the durable jobs by kind and state, and the age of the
// oldest job waiting for a worker, read from read at each scrape. /readyz
// does not look at them: a backlog is no reason to take an instance out of
// rotation.
func (m *Metrics) WatchJobs(read func() Jobs) {
	m.registry.MustRegister(jobsCollector{read: read,
		count: prometheus.NewDesc("inventory_durable_jobs", "Durable jobs in the database, by kind and state (River's: available, running, retryable, scheduled, completed, discarded, cancelled).",
			[]string{"kind", "state"}, nil),
		oldest: prometheus.NewDesc("inventory_durable_jobs_oldest_available_seconds", "How long the oldest job due has waited for a worker (0 when none waits).", nil, nil),
	})
}

// TreeCache are the figures of the cache of signed inventories' trees.
type TreeCache struct {
	Hits, Misses, Bytes, Trees, MaxBytes int64
}

// WatchTreeCache adds the tree cache's figures, read at each scrape: trees
// written from it (hits) and from the database then kept (misses), and
// what it holds against its bound.
func (m *Metrics) WatchTreeCache(read func() TreeCache) {
	m.registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_tree_cache_hits_total",
			Help: "Signed inventories' trees answered from the tree cache, without the database."},
			func() float64 { return float64(read().Hits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inventory_tree_cache_misses_total",
			Help: "Signed inventories' trees read from the database, then kept in the tree cache."},
			func() float64 { return float64(read().Misses) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_tree_cache_bytes", Help: "Bytes the tree cache holds, counted as it bounds them."},
			func() float64 { return float64(read().Bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_tree_cache_max_bytes", Help: "The tree cache's bound (INVENTORY_TREE_CACHE_BYTES)."},
			func() float64 { return float64(read().MaxBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inventory_tree_cache_trees", Help: "Trees the tree cache holds."},
			func() float64 { return float64(read().Trees) }),
	)
}
