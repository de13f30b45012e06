// Package server routes the service's HTTP endpoints.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"
	"github.com/rs/cors"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/onewrite"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/requestid"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/signpage"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/tracing"
	"github.com/propertyrecords/inventory/internal/treecache"
	"github.com/propertyrecords/inventory/internal/waitbudget"
	"github.com/propertyrecords/inventory/internal/webhooks"
	"github.com/propertyrecords/inventory/rest"
)

// Options are the handler's settings.
type Options struct {
	// IDECompany is the company whose X-Company-Id the IDE opens with.
	IDECompany uuid.UUID
	// RESTBaseURL is the path prefix of the REST group B endpoints.
	RESTBaseURL string
	// Files is the store of signed PDFs and photos.
	Files *files.Store
	// PublicURL, when set, starts every download URL; else the request's scheme and host do.
	PublicURL string
	// RequestTimeout is every request's deadline (DefaultRequestTimeout when 0).
	RequestTimeout time.Duration
	// AllowedHosts are the Host header values (besides loopback ones) that
	// download URLs may be built from when PublicURL is not set.
	AllowedHosts []string
	// Drain, when given, is how the server is told it is shutting down.
	Drain *Drain
	// CORSOrigins are the origins browsers may call the API from: nil or
	// ["*"] any (the default), ["none"] none (no CORS headers at all).
	CORSOrigins []string
	// Metrics, when set, records every request; /metrics serves them unless
	// SeparateMetrics (the binary serves them on an address of their own).
	Metrics         *metrics.Metrics
	SeparateMetrics bool
	// Tracing wraps each request in a span (tracing.Setup installed an exporter).
	Tracing bool
	// AccessLog is which requests get a line and at what level: "sampled"
	// (the binary's default: at info, every failed or slow request and one in
	// AccessLogSample of the others), "info" or "debug" (every request at
	// that level; debug is the default here) or "off".
	AccessLog string
	// AccessLogSample is one in how many ordinary requests "sampled" logs
	// (DefaultAccessLogSample when 0).
	AccessLogSample int
	// SlowRequest is how long a request takes to be slow, and logged whatever
	// the sampling (DefaultSlowRequest when 0).
	SlowRequest time.Duration
	// Auth is how callers are authenticated (auth.Header when empty), with
	// the Verifier of the other modes; Limiter limits each caller's rate.
	Auth     auth.Mode
	Verifier auth.Verifier
	Limiter  *auth.Limiter
	// Share shares the requests in flight fairly between companies, and
	// Budget charges each operation's price to its company; nil: neither.
	Share  *fairshare.Queue
	Budget *fairshare.Budget
	// SharedLimits is the Redis that Limiter, Budget and the Hub's caps
	// share with the other instances (nil: none), for /readyz and /metrics
	// to say whether it answers.
	SharedLimits *sharedlimit.Redis
	// MaxResponseBytes bounds each GraphQL answer (graph.DefaultMaxResponseBytes when 0).
	MaxResponseBytes int
	// MaxPhotoBytes bounds a photo addItemPhoto takes
	// (upload.DefaultMaxPhotoBytes when 0).
	MaxPhotoBytes int64
	// TreeCacheBytes bounds the signed inventories' trees kept in memory
	// (treecache.DefaultMaxBytes when 0; none when negative).
	TreeCacheBytes int64
	// Live serves subscriptions (none without a Hub).
	Live LiveOptions
	// PDFRendering bounds the renderings of signed PDFs not kept yet.
	PDFRendering signedpdf.RenderingOptions
	// Jobs are the durable jobs (internal/jobs): the writes insert theirs,
	// and its workers make what they need here (the signed PDFs). The
	// caller starts it after Handler and stops it before the store
	// closes. Nil: no jobs; the PDFs are made by the background rendering
	// alone.
	Jobs *jobs.Jobs
	// Webhooks configure the webhook deliveries, which Jobs insert and
	// send (none without Jobs).
	Webhooks webhooks.Options
	// ReadOnly refuses every client's writes (INVENTORY_WRITES=off).
	ReadOnly bool
	// TimeZone is where reports show times, beside UTC
	// (report.DefaultTimeZone when nil).
	TimeZone *time.Location
	// SigningLinkTTL is how long a signature link lasts unless its request
	// says (records.DefaultLinkTTL when 0).
	SigningLinkTTL time.Duration
	// SignRatePerMinute is each address's requests a minute to the
	// signature links' pages (signpage.DefaultRatePerMinute when 0; none
	// when negative).
	SignRatePerMinute int
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// signer's address on those pages.
	TrustedProxies []netip.Prefix
}

// Access log sampling: at moderate load a line for every request was 47 MB
// every 10 minutes, nearly all of it successes nobody reads. A failure or a
// slow request is what an operator looks for, so each of those is logged;
// of the rest, one in a hundred shows the traffic's shape.
const (
	DefaultAccessLogSample = 100
	DefaultSlowRequest     = time.Second
)

// DefaultRequestTimeout is the deadline of a request: generous for reads
// whose price the cost check bounds, short enough that a stuck one does not
// hold a connection for long.
const DefaultRequestTimeout = 10 * time.Second

// Handler serves GraphQL at /graphql, the legacy REST endpoints and their
// OpenAPI document, the IDE at /, /healthz (the process is up) and /readyz
// (the database answers).
func Handler(st *store.Store, log *slog.Logger, opts Options) http.Handler {
	log = requestid.Logger(log)
	mux := http.NewServeMux()
	mode := opts.Auth
	if mode == "" {
		mode = auth.Header
	}
	mux.Handle("GET /{$}", ide.Page("/graphql", opts.IDECompany, mode != auth.Header, func(ctx context.Context) ide.Examples {
		return ideExamples(tenant.WithCompany(ctx, opts.IDECompany), st, log)
	}))
	mux.Handle("GET /ide/", ide.Assets())
	mux.Handle("GET /favicon.ico", ide.Favicon())
	// The signed PDFs not kept yet are made in the background, one rendering
	// of each for a signature and the downloads that come meanwhile.
	// Each signature keeps the SHA-256 of the draft it signed (keeper's).
	keeper := signedpdf.New(st.Client, opts.Files, opts.TimeZone)
	pdfs := signedpdf.NewRenderings(keeper, log, opts.PDFRendering)
	writeJobs := jobsIfFiles(opts.Jobs, opts.Files, pdfs)
	thumbnailsOf(opts.Jobs, st, opts.Files)
	hooks := webhooksOn(st, opts.Jobs, opts.Webhooks, log)
	exec := graph.NewExecutor(st.Client, st, opts.Files, log, graph.ExecutorOptions{MaxResponseBytes: opts.MaxResponseBytes, Budget: opts.Budget,
		MaxPhotoBytes: opts.MaxPhotoBytes, Live: opts.Live.Hub, EventReadTimeout: requestTimeout(opts), PDFs: pdfsIfFiles(pdfs, opts.Files),
		ReadOnly: opts.ReadOnly, SigningLinkTTL: opts.SigningLinkTTL, Drafts: keeper, Jobs: writeJobs, Webhooks: hooks,
		TreeCacheBytes: cmp.Or(opts.TreeCacheBytes, treecache.DefaultMaxBytes)})
	keepTreesCurrent(exec.TreeCache(), opts.Live.Hub, opts.Metrics)
	api := rest.New(exec, opts.Files, pdfs, log, opts.RESTBaseURL, mode, opts.TimeZone)
	signLinks(mux, st, log, pdfs, keeper, writeJobs, opts)
	// One authenticator for every transport: its throttled lane, its
	// memory of credentials verified lately and its rate limiter hold for
	// HTTP requests and WebSocket connections alike.
	authn := auth.New(auth.Options{Mode: mode, Verifier: opts.Verifier, Limiter: opts.Limiter,
		Open: openOn(mux), WriteError: writeErrorFor(api, exec), Log: log})
	drain := opts.Drain
	if drain == nil {
		drain = NewDrain()
	}
	timeout := requestTimeout(opts)
	liveConns := newLiveConns(opts.Live, opts.CORSOrigins, authn,
		operationGate{queue: opts.Share, timeout: timeout, wait: st.AcquireTimeout()})
	drain.OnStart(liveConns.closeAll)
	drain.OnStart(pdfs.Close)
	if opts.Metrics != nil && opts.Live.Hub != nil {
		hub := opts.Live.Hub
		opts.Metrics.WatchLive(liveConns.Open, func() metrics.LiveStats {
			s := hub.Stats()
			return metrics.LiveStats{Subscribers: s.Subscribers, Delivered: s.Delivered, Dropped: s.Dropped, Mode: hub.Mode()}
		})
	}
	if opts.Metrics != nil && opts.SharedLimits != nil {
		opts.Metrics.WatchSharedLimits(func() metrics.SharedLimits {
			s := opts.SharedLimits.Stats()
			return metrics.SharedLimits{Shared: s.Shared, Outages: s.Outages, LocalDecisions: s.LocalDecisions}
		})
	}
	graphQL := graphqlhttp.Handler(exec)
	mux.Handle("/graphql", withCompany(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLive(r) && opts.Live.Hub != nil {
			liveConns.serve(w, r, exec)
			return
		}
		graphQL.ServeHTTP(w, r)
	})))
	api.Register(mux)
	mux.Handle("/", api.NotFound())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.Handle("GET /readyz", readiness(st, opts.Files, opts.Live.Hub, opts.SharedLimits, drain, log))
	if opts.Metrics != nil && !opts.SeparateMetrics {
		mux.Handle("GET /metrics", opts.Metrics.Handler())
	}
	var authenticated http.Handler = authn.Middleware(
		shared(opts.Share, openOn(mux), writeErrorFor(api, exec), withBaseURL(opts.PublicURL, opts.AllowedHosts, mux)))
	// route names a request by the pattern of the endpoint it reaches, never
	// by its path, whose values clients choose.
	route := func(r *http.Request) string {
		_, pattern := mux.Handler(r)
		return pattern
	}
	if opts.Metrics != nil {
		// Refusals (401, 429) count too, under the route they asked for.
		authenticated = countRequests(opts.Metrics, route, authenticated)
	}
	access := accessLog{level: opts.AccessLog, sample: cmp.Or(opts.AccessLogSample, DefaultAccessLogSample), slow: cmp.Or(opts.SlowRequest, DefaultSlowRequest)}
	var served http.Handler = logRequests(log, access, securityHeaders(withCaller(withDeadline(timeout, st.AcquireTimeout(), log, withReadSession(authenticated)))))
	if opts.Tracing {
		served = tracing.Handler(served, route)
	}
	// An answer whole in memory leaves in one write once every middleware
	// has returned (internal/onewrite).
	return onewrite.Handler(drain.track(crossOrigin(opts.CORSOrigins, requestid.Middleware(served))))
}

// signLinks serves the pages a party signs from a link (internal/signpage),
// through records as GraphQL's mutations do, each address within its rate.
func signLinks(mux *http.ServeMux, st *store.Store, log *slog.Logger, pdfs *signedpdf.Renderings, drafts records.Drafts, writeJobs records.Jobs, opts Options) {
	var maker records.PDFMaker
	if r := pdfsIfFiles(pdfs, opts.Files); r != nil {
		maker = r
	}
	svc := records.NewService(st.Client, st, log, maker, opts.Files, opts.ReadOnly).WithLinkTTL(opts.SigningLinkTTL).WithDrafts(drafts).WithJobs(writeJobs)
	perMinute := cmp.Or(opts.SignRatePerMinute, signpage.DefaultRatePerMinute)
	var limiter *auth.Limiter
	if perMinute > 0 {
		limiter = auth.NewLimiter(float64(perMinute)/60, perMinute)
	}
	pages := signpage.New(svc, signpage.Options{Limiter: limiter, TrustedProxies: opts.TrustedProxies, Log: log})
	// A link grants access, and its cancellation or use ends it: what the
	// pages read is what the primary has committed, never a standby's lag.
	latest := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { h(w, r.WithContext(store.ReadLatest(r.Context()))) }
	}
	mux.HandleFunc("GET "+signpage.Path+"{token}", latest(pages.Show))
	mux.HandleFunc("POST "+signpage.Path+"{token}", latest(pages.Sign))
	mux.HandleFunc("GET "+signpage.Path+"{token}/draft.pdf", latest(pages.Draft))
	mux.HandleFunc("GET "+signpage.PadScript, pages.Script)
}

// jobsIfFiles is the jobs the writes insert, when there is a file store
// to keep the PDFs in (nil otherwise: a job could never be done); the
// signed PDF's worker makes them through pdfs, the rendering the
// signatures and the downloads share.
func jobsIfFiles(j *jobs.Jobs, fs *files.Store, pdfs *signedpdf.Renderings) records.Jobs {
	if j == nil || fs == nil {
		return nil
	}
	j.MakeSignedPDFsWith(pdfs)
	return j
}

// thumbnailsOf lets j's worker make the thumbnails an import left to it,
// from st's records into fs.
func thumbnailsOf(j *jobs.Jobs, st *store.Store, fs *files.Store) {
	if j != nil && fs != nil {
		j.MakeThumbnailsWith(st.Client, fs)
	}
}

// webhooksOn is the webhooks' service of st: every record event written
// through st's client makes its deliveries, in its transaction, and j's
// worker sends them. Without j, endpoints are kept and nothing is sent.
func webhooksOn(st *store.Store, j *jobs.Jobs, opts webhooks.Options, log *slog.Logger) *webhooks.Service {
	if opts.Log == nil {
		opts.Log = log
	}
	if j == nil {
		return webhooks.New(st.Client, nil, opts)
	}
	svc := webhooks.New(st.Client, j, opts)
	svc.EnqueueOn(st.Client)
	j.DeliverWebhooksWith(svc)
	return svc
}

// pdfsIfFiles is pdfs when there is a file store to keep the PDFs in.
func pdfsIfFiles(pdfs *signedpdf.Renderings, fs *files.Store) *signedpdf.Renderings {
	if fs == nil {
		return nil
	}
	return pdfs
}

// requestTimeout is each request's deadline (DefaultRequestTimeout unless
// set), and each operation's over a live connection.
func requestTimeout(opts Options) time.Duration {
	if opts.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return opts.RequestTimeout
}

// openPatterns are the endpoints anyone may call, credential or not: health
// and readiness, metrics, the IDE page, its assets and its icon (browsers
// ask for /favicon.ico with no header), the OpenAPI document,
// signed photo URLs (their signature is the credential: browsers load
// them in img tags, which send no header), and the signature links' pages
// (their token is the credential: the signer has no other). Matched by the pattern that
// serves the request, so that no spelling of a path, and no base URL set
// under an open prefix, opens another endpoint.
var openPatterns = map[string]bool{
	"GET /{$}": true, "GET /ide/": true, "GET /favicon.ico": true, "GET /healthz": true, "GET /readyz": true, "GET /metrics": true,
	"/openapi.json": true, files.PhotoPath + "{reference}": true,
	"GET " + signpage.Path + "{token}": true, "POST " + signpage.Path + "{token}": true,
	"GET " + signpage.Path + "{token}/draft.pdf": true, "GET " + signpage.PadScript: true,
}

// openOn reports whether mux serves r with an open endpoint.
func openOn(mux *http.ServeMux) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if isLive(r) && isUpgrade(r) {
			return true // its credential comes in connection_init (liveConns.serve)
		}
		_, pattern := mux.Handler(r)
		return openPatterns[pattern]
	}
}

// writeErrorFor answers a refused request as what it asked for: a GraphQL
// error at /graphql, the REST error body elsewhere.
func writeErrorFor(api *rest.API, exec *graph.Executor) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if r.URL.Path == "/graphql" {
			exec.WriteError(w, r, err)
			return
		}
		api.WriteError(w, r, err)
	}
}

// crossOrigin lets browser apps on the allowed origins call the API (CORS,
// with rs/cors). The API authenticates with a header a script sets
// (X-Company-Id), never with cookies, so credentials are not allowed, and
// allowing any origin gives a page nothing its own script could not send.
// Preflights are answered here; the headers clients need to read (when to
// retry, a download's name and version) are exposed.
func crossOrigin(origins []string, next http.Handler) http.Handler {
	if len(origins) == 1 && origins[0] == "none" {
		return next
	}
	if len(origins) == 0 {
		origins = []string{"*"}
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost},
		// Besides the API's own: what browser clients send on their own,
		// the W3C trace context (the service speaks OpenTelemetry) and
		// Apollo Client's name, version and CSRF-preflight headers.
		AllowedHeaders: []string{"Accept", "Content-Type", tenant.Header, "Authorization", "X-Api-Key", "X-Request-Id",
			"Range", "If-None-Match", "If-Modified-Since", "traceparent", "tracestate", "baggage",
			"apollographql-client-name", "apollographql-client-version", "apollo-require-preflight", "x-apollo-operation-name"},
		ExposedHeaders: []string{"Retry-After", "X-Request-Id", "ETag", "Content-Disposition", "Content-Range", "Last-Modified"},
		MaxAge:         600,
	}).Handler(next)
}

// readiness answers whether this instance can serve now: not when it is
// shutting down, when the database does not answer, or when every database
// connection is taken and statements wait for one (say, behind a locked
// table). The status tells the three apart, so that an operator does not
// look for a dead database that is only busy. A blob store that refuses
// writes (full, read-only) is said, with a 200: every read is still served,
// and taking the instance out of rotation would stop them too (on a shared
// store, on every instance) for the sake of uploads no instance can take.
func readiness(st *store.Store, blobs *files.Store, hub *live.Hub, shared *sharedlimit.Redis, drain *Drain, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if drain.Draining() {
			writeStatus(w, http.StatusServiceUnavailable, "shutting down")
			return
		}
		// The pool keeps a connection spare for this check, so that a full
		// pool does not make it wait and read as a dead database.
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		replicas := st.Replicas()
		// With standbys, the answer says how each database is.
		write := func(code int, status string) {
			if replicas == nil {
				writeStatus(w, code, status)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "replicas": replicas})
		}
		if err := st.Ping(ctx); err != nil {
			if r.Context().Err() != nil {
				// The prober gave up (a probe's own timeout, or one queued
				// while the server started): no one reads this answer, and
				// the database said nothing about itself.
				log.DebugContext(ctx, "readyz: the probe ended before the database answered", "err", err)
				return
			}
			// With a standby in rotation, reads are still served: the
			// instance stays in the load balancer's, for them.
			if slices.ContainsFunc(replicas, func(r store.ReplicaStatus) bool { return r.Healthy }) {
				log.WarnContext(ctx, "readyz: the primary is unreachable; reads go to the standbys", "err", err)
				write(http.StatusOK, "reads only: the primary database is unreachable")
				return
			}
			log.WarnContext(ctx, "readyz: database unreachable", "err", err)
			write(http.StatusServiceUnavailable, "database unreachable")
			return
		}
		if pool := st.Pool(); pool.Exhausted() {
			log.WarnContext(ctx, "readyz: every database connection is in use", "in_use", pool.InUse, "size", pool.Size, "waiting", pool.Waiting)
			write(http.StatusServiceUnavailable, "database busy: all connections in use")
			return
		}
		if blobs != nil {
			if reason := blobs.Refusing(ctx); reason != "" {
				log.WarnContext(ctx, "readyz: the blob store refuses writes; reads are served", "reason", reason)
				write(http.StatusOK, "files cannot be stored: the blob store refuses writes ("+reason+")")
				return
			}
		}
		// Served all the same, with what is not as configured: subscribers
		// told of each write within a poll, not at once; limits counted per
		// instance, so that a caller spread over n instances gets up to n
		// times its budget until Redis answers again.
		status := "ok"
		if hub != nil && st.Dialect() == dialect.Postgres && hub.Mode() == live.ModePolling {
			status += "; live updates by polling: LISTEN does not reach this instance (set INVENTORY_DATABASE_LISTEN_URL to a direct connection to the primary)"
		}
		if shared != nil && !shared.Shared() {
			status += "; limits per instance: Redis (INVENTORY_REDIS_URL) does not answer, so rate limits, cost budgets and subscription caps are this instance's own until it does"
		}
		write(http.StatusOK, status)
	})
}

// withDeadline gives each request its deadline. Everything the request does,
// its SQL statements included, runs under it and is cancelled when it passes
// or when the client goes away (net/http cancels the request's context then).
// Reading the body is bound by it too: a context does not stop a read, so
// the connection gets the same read deadline, and a body that trickles in
// past it fails as a timeout (408) rather than holding the handler.
//
// It also gives the request its patience: how long it may wait, in all, for
// a place in the fair share and for database connections (the acquire
// timeout), so that a busy service answers 503 after that time, not after
// that time once per statement.
//
// A request that ran out of its deadline is logged here, once, at WARN,
// whichever part of it ran out: the handlers' own lines about it are about
// their errors, and a timeout an operator should see must not depend on
// each handler remembering to say so.
func withDeadline(timeout, wait time.Duration, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLive(r) { // bounded by LiveOptions instead
			next.ServeHTTP(w, r.WithContext(waitbudget.With(r.Context(), wait)))
			return
		}
		start := time.Now()
		deadline := start.Add(timeout)
		ctx, cancel := context.WithDeadline(waitbudget.With(r.Context(), wait), deadline)
		defer cancel()
		if r.ContentLength != 0 && !readTimeoutWithin(r, timeout) {
			// net/http resets the read deadline for the connection's next
			// request; a writer without one (a test's) just has none.
			_ = http.NewResponseController(w).SetReadDeadline(deadline)
		}
		answer := &answerStart{ResponseWriter: w}
		returned := false
		defer func() {
			if ranOut(ctx, answer, deadline, returned) {
				log.LogAttrs(ctx, slog.LevelWarn, "request ran past its deadline", slog.String("method", r.Method),
					slog.String("path", loggedPath(r)), slog.Int("status", answer.status), slog.Duration("elapsed", time.Since(start)),
					slog.Duration("timeout", timeout), slog.Bool("answer_cut", answer.started && !returned))
			}
		}()
		next.ServeHTTP(answer, r.WithContext(ctx))
		returned = true
	})
}

// ranOut reports whether a request ran out of its deadline: the deadline
// passed (rather than its client going away) before its answer started, or
// while it was being written and the handler cut it short (a stream that
// could not finish: it panics with http.ErrAbortHandler, so that the client
// sees a broken answer, not a short one). A download whose answer started in
// time and goes on past the deadline, as files do, did not.
func ranOut(ctx context.Context, answer *answerStart, deadline time.Time, returned bool) bool {
	if ctx.Err() != context.DeadlineExceeded {
		return false
	}
	return !answer.started || answer.at.After(deadline) || !returned
}

// answerStart notes when, and with what status, a request's answer started.
type answerStart struct {
	http.ResponseWriter
	started bool
	at      time.Time
	status  int
}

func (a *answerStart) start(code int) {
	if !a.started && code >= 200 {
		a.started, a.at, a.status = true, time.Now(), code
	}
}

func (a *answerStart) WriteHeader(code int) {
	a.start(code)
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerStart) Write(b []byte) (int, error) {
	a.start(http.StatusOK)
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (a *answerStart) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Flush sends what is written so far: answers in parts (@defer) and streams need it.
func (a *answerStart) Flush() { _ = http.NewResponseController(a.ResponseWriter).Flush() }

// readTimeoutWithin reports whether the server's own read timeout, which
// runs from the start of the request, ends reading sooner than timeout would:
// setting the read deadline replaces it, and must never lengthen it.
func readTimeoutWithin(r *http.Request, timeout time.Duration) bool {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	return srv != nil && srv.ReadTimeout > 0 && srv.ReadTimeout <= timeout
}

// ShareOptions size the fair share of a server on st: by default (places 0)
// a place for each database connection, and one more for each CPU, for the
// requests encoding their answers while others hold the connections. A
// request waits for a place as long as it would for a connection
// (maxWait), and each company may have 16 times the places waiting (at
// least 128: a page's burst of requests, or a shutdown's, must queue).
func ShareOptions(st *store.Store, places int, maxWait time.Duration) fairshare.QueueOptions {
	if places == 0 {
		places = st.Pool().Size + runtime.GOMAXPROCS(0)
	}
	return fairshare.QueueOptions{Places: places, MaxQueued: max(128, 16*places), MaxWait: maxWait}
}

// shared runs each request that reads records in its company's fair share
// of the service (see internal/fairshare), under the key its cost budget is
// charged to: it waits for a place in queue (when there is one),
// and gives it back as soon as its answer starts, so that a slow client
// reading a long download holds no place. Open endpoints (health, metrics,
// the IDE's page, signed photo URLs) read no records and never wait.
func shared(queue *fairshare.Queue, open func(*http.Request) bool, writeError func(http.ResponseWriter, *http.Request, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A live connection holds no place: it would hold it for its life.
		// Its subscriptions are bounded by the Hub, its events' reads by
		// their price.
		if open(r) || isLive(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := fairshare.KeyOf(r) // the budget's key too
		release, err := queue.Acquire(r.Context(), key)
		if err != nil {
			apperr.SetRetryAfterFor(w.Header(), err)
			writeError(w, r, err)
			return
		}
		defer release()
		ctx, place := fairshare.WithPlace(fairshare.WithKey(r.Context(), key))
		next.ServeHTTP(&releasingWriter{ResponseWriter: w, release: release, place: place}, r.WithContext(ctx))
	})
}

// releasingWriter gives a request's place back when its answer starts,
// unless the request keeps it (fairshare.KeepPlace).
type releasingWriter struct {
	http.ResponseWriter
	release func()
	place   *fairshare.Place
}

func (w *releasingWriter) WriteHeader(code int) {
	if code >= 200 && !w.place.Kept() {
		w.release()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *releasingWriter) Write(b []byte) (int, error) {
	if !w.place.Kept() {
		w.release()
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (w *releasingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what is written so far: answers in parts (@defer) need it.
func (w *releasingWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// withBaseURL records the base of the download URLs given in this request's
// answers: public when set, else the request's own Host only when it is a
// loopback one or one of allowedHosts (files.RequestBaseURL says why).
func withBaseURL(public string, allowedHosts []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(files.WithBaseURL(r.Context(), files.RequestBaseURL(r, public, allowedHosts))))
	})
}

// withCaller records who sent the request, so that the audit line of a read
// without a company (tenant.Unrestricted) names its caller.
func withCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(tenant.WithCaller(r.Context(), r.RemoteAddr, r.Header.Get("X-Forwarded-For"))))
	})
}

// securityHeaders sets what every answer carries unless its handler says
// otherwise: nosniff, so that no browser runs a JSON error or a stored file
// as a script or page; and no-store, because nearly every answer is a
// company's records (REST, GraphQL, signed PDFs) and must not be kept by
// browsers or proxies. Handlers of what may be cached (the IDE's assets,
// /openapi.json, signed photo URLs for as long as they are valid) set their
// own Cache-Control over it. Set before the handler runs, so that even an
// answer a handler writes in a hurry (a panic's 500) has them.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// withCompany scopes each request to the company its X-Company-Id header
// or x-company-id parameter names (tenant.FromRequest), unless a credential
// has bound it to its company already.
func withCompany(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, bound := tenant.Bound(r.Context()); bound {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(tenant.FromRequest(r.Context(), r.Header, r.URL.RawQuery)))
	})
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(`{"status":"` + status + `"}`))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush sends what is written so far: answers in parts (@defer) need it.
func (s *statusRecorder) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

// countRequests records each request in m under its route, and makes m the
// request's metrics (metrics.From) for what it records within.
func countRequests(m *metrics.Metrics, route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(m.WithContext(r.Context())))
		m.Request(route(r), r.Method, rec.status, time.Since(start))
	})
}

// accessLog is which requests logRequests logs: level "sampled", "info",
// "debug" (also when empty) or "off"; when sampled, one in sample of the
// requests that neither failed nor took slow or longer.
type accessLog struct {
	level  string
	sample int
	slow   time.Duration
}

// logRequests writes the access log: a line per request logged, with its
// request id. A sampled line says how many requests it stands for
// (sample), so that counts read from the log can be scaled back up.
func logRequests(log *slog.Logger, access accessLog, next http.Handler) http.Handler {
	at := slog.LevelDebug
	switch access.level {
	case "off":
		return next
	case "info", "sampled":
		at = slog.LevelInfo
	}
	sampled := access.level == "sampled"
	var ordinary atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		returned := false
		// Deferred, so that an answer cut short (a stream that failed
		// midway ends its handler with http.ErrAbortHandler) has its line:
		// a failure, whatever status it had sent.
		defer func() {
			elapsed := time.Since(start)
			weight := 1
			if sampled && returned && rec.status < http.StatusBadRequest && elapsed < access.slow {
				// Counted, not drawn at random: the first of each run of
				// sample is logged, so a quiet server still shows its first
				// request.
				if (ordinary.Add(1)-1)%uint64(access.sample) != 0 {
					return
				}
				weight = access.sample
			}
			// Checked first: the arguments of a line that is not written
			// would still be built, a few allocations on every request.
			if !log.Enabled(r.Context(), at) {
				return
			}
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", loggedPath(r)),
				slog.Int("status", rec.status), slog.Float64("duration_ms", durationMS(elapsed)), slog.String("remote_addr", r.RemoteAddr)}
			if weight > 1 {
				attrs = append(attrs, slog.Int("sample", weight))
			}
			if !returned {
				attrs = append(attrs, slog.Bool("answer_cut", true))
			}
			log.LogAttrs(r.Context(), at, "http request", attrs...)
		}()
		next.ServeHTTP(rec, r)
		returned = true
	})
}

// loggedPath is the path of r as the log says it, the one place it is
// written from: a signature link's token is a credential, so its page is
// logged as /sign/… whatever follows, also when spelled with a prefix the
// mux cleans away (//sign/…).
func loggedPath(r *http.Request) string {
	if i := strings.Index(r.URL.Path, signpage.Path); i >= 0 {
		return r.URL.Path[:i] + signpage.Path + "…"
	}
	return r.URL.Path
}

// durationMS is d in milliseconds to the microsecond, the access log's
// duration_ms: a key that names its unit, where slog's Duration wrote
// nanoseconds under "duration" in JSON and a Go duration string in text.
func durationMS(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}
