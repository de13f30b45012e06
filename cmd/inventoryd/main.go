// Command inventoryd serves inventory and property records.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/buildinfo"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/onewrite"
	"github.com/propertyrecords/inventory/internal/requestid"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/tracing"
	"github.com/propertyrecords/inventory/internal/verify"
	"github.com/propertyrecords/inventory/internal/webhooks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, stdio{os.Stdin, os.Stdout, os.Stderr}); err != nil {
		if !errors.Is(err, errHelp) {
			fmt.Fprintln(os.Stderr, "inventoryd:", err)
			os.Exit(1)
		}
	}
}

var errHelp = errors.New("help requested")

// stdio is where a command reads and writes.
type stdio struct {
	in          io.Reader
	out, errOut io.Writer
}

// run runs the command args name (serve when args start with a flag or are
// empty).
func run(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		b := buildinfo.Read()
		_, err := fmt.Fprintf(std.out, "inventoryd %s (commit %s, %s)\n", b.Version, b.Commit, b.GoVersion)
		return err
	}
	name := serveCommand.name
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	var err error
	switch name {
	case serveCommand.name:
		err = serve(ctx, args, getenv, std)
	case migrateCommand.name:
		err = migrateCmd(ctx, args, getenv, std)
	case generateCommand.name:
		err = generateCmd(ctx, args, getenv, std)
	case importCommand.name:
		err = importCmd(ctx, args, getenv, std)
	case exportCommand.name:
		err = exportCmd(ctx, args, getenv, std)
	case verifyCommand.name:
		err = verifyCmd(ctx, args, getenv, std)
	case companyCommand.name:
		err = companyCmd(ctx, args, getenv, std)
	case apikeyCommand.name:
		err = apikeyCmd(ctx, args, getenv, std)
	case healthcheckCommand.name:
		err = healthcheckCmd(ctx, args, getenv, std)
	default:
		names := make([]string, len(commands))
		for i, c := range commands {
			names[i] = c.name
		}
		return fmt.Errorf("unknown command %q: use one of %s, or --help", name, strings.Join(names, ", "))
	}
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	return err
}

// serve serves until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	cfg, err := parseConfig(args, getenv, std.errOut)
	if err != nil {
		return err
	}
	traced, stopTracing, err := tracing.Setup(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { _ = stopTracing(context.WithoutCancel(ctx)) }()
	m := &Main{Config: cfg, Log: newLogger(std.errOut, cfg), Tracing: traced}
	// tenant.Unrestricted writes its audit lines to the default logger.
	slog.SetDefault(m.Log)
	tuneGC(getenv, cfg.TreeCacheBytes)
	if err := m.Run(ctx); err != nil {
		return errors.Join(err, m.Close())
	}
	return m.Wait(ctx)
}

// Garbage collection settings of the server, unless the operator sets Go's
// own GOGC or GOMEMLIMIT. A server's live heap is a few tens of megabytes and
// nearly all it allocates is a request's garbage; collecting at 5 times the
// live heap rather than twice cut the CPU of a nested-tree request by a
// sixth, and the soft limit on the heap keeps RSS under 150 MB even at 50
// concurrent trees of 20 inventories (docs/decisions.md). The tree cache's
// bound (kept) is added to the limit: what it keeps stays live, and a limit
// it filled would have the collector run without pause (server CPU went from
// 1 to nearly 5 ms a request once the cache filled, in bench/peers).
const (
	gcPercent   = 400
	memoryLimit = 90 << 20
)

func tuneGC(getenv func(string) string, kept int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit + max(kept, 0))
	}
}

// Shutdown defaults: two seconds of not-ready serving let keep-alive
// clients learn, from a "Connection: close" answer, not to send on a
// connection about to close (more suits a load balancer that polls
// /readyz); twenty more let a request near its own deadline finish.
const (
	defaultShutdownDelay   = 2 * time.Second
	defaultShutdownTimeout = 20 * time.Second
	// requestsEndWithin is how long cut requests get to see their context
	// cancelled and return.
	requestsEndWithin = 2 * time.Second
)

func newLogger(w io.Writer, cfg Config) *slog.Logger {
	handler := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: durationsAsText})
	return requestid.Logger(slog.New(tenant.AuditLog(handler, cfg.AuditLog)))
}

// durationsAsText writes each duration of a log line as Go spells it
// ("10s", "1m30s"), not as slog's JSON does (nanoseconds: 10000000000),
// which no one reads at a glance.
func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// Main is the running program, so that tests can start the real thing on port 0.
type Main struct {
	Config Config
	Log    *slog.Logger
	// Tracing spans requests, operations and statements (tracing.Setup
	// installed an exporter).
	Tracing bool

	store *store.Store
	files *files.Store
	drain *server.Drain
	// live routes the writes to subscriptions; stopLive ends it, and
	// liveDone is closed once it has.
	live     *live.Hub
	stopLive context.CancelFunc
	liveDone chan struct{}
	server   *http.Server
	// handler is the server's: the starting page, then the service.
	handler  *swappableHandler
	listener net.Listener
	served   chan error
	// shared keeps the limits in Redis, when RedisURL is set.
	shared *sharedlimit.Redis
	// metricsServer serves /metrics on MetricsAddr, when that is set.
	metricsServer *http.Server
	// jobs inserts the durable jobs the writes cause, and works them
	// unless Config.Jobs is off.
	jobs *jobs.Jobs
	// restoreTemp puts back the $TMPDIR the process had before Run.
	restoreTemp func()

	closeOnce sync.Once
	closeErr  error
}

// Run binds the listen address (first, so that a port in use is found
// before anything is written), opens and migrates the database, loads the
// demo data into an empty one, and starts serving; it returns once the
// server is listening.
func (m *Main) Run(ctx context.Context) error {
	m.Log.Info("starting", "build", buildinfo.Read(), "config", m.Config)
	var err error
	m.listener, err = net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return err
	}
	if err := m.refuseAnOpenHeaderMode(); err != nil {
		return err
	}
	// No statement of a request outlives the request: PostgreSQL holds it
	// to that too, should cancelling it fail. The long commands open the
	// store without it, and migrations run without it here too.
	storeOptions := append(m.Config.storeOptions(), store.WithStatementTimeout(m.Config.RequestTimeout))
	if m.Tracing {
		storeOptions = append(storeOptions, store.WithDriver(tracing.Driver))
	}
	if err := m.Config.checkDatabaseFolder(); err != nil {
		return err
	}
	st, err := store.Open(ctx, m.Config.DatabaseURL, storeOptions...)
	if err != nil {
		return err
	}
	m.store = st
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) > 0 {
		m.Log.Info("applied migrations", "versions", applied)
	}
	m.files, err = openFiles(ctx, m.Config)
	if err != nil {
		return err
	}
	if err := m.removeLeftovers(ctx); err != nil {
		return err
	}
	m.drain = server.NewDrain()
	if m.Config.loadsDemo() {
		// A first start serves the starting page while the demo loads:
		// the address answers from the moment the log says where it is.
		if empty, err := datagen.Empty(ctx, st.Client); err != nil {
			return err
		} else if empty {
			m.serveStartingPage()
		}
		loaded, stats, err := datagen.LoadDemoIfEmpty(ctx, st.Client, m.files, datagen.WithTimeZone(m.Config.TimeZone))
		if err != nil {
			return fmt.Errorf("loading demo data: %w", err)
		}
		if loaded {
			m.Log.Info("loaded demo data", "companies", stats.Companies, "properties", stats.Properties,
				"inventories", stats.Inventories, "items", stats.Items, "demo_company", datagen.DemoCompanies[0])
		}
	}
	// The IDE opens on the demo company only where it holds records: it
	// names no company of a database that was not loaded as demo.
	ideCompany := datagen.DemoCompanies[0]
	if demo, err := st.Client.Property.Query().Exist(tenant.WithCompany(ctx, ideCompany)); err != nil || !demo {
		ideCompany = uuid.Nil
	}
	verifier, err := m.verifier(ctx)
	if err != nil {
		return err
	}
	instruments := metrics.New()
	instruments.WatchDB(st.Stats)
	instruments.WatchBlobStore(func() metrics.BlobStore {
		state := m.files.WriteState()
		return metrics.BlobStore{Refusing: state.Reason, Refused: state.Refused}
	})
	share := fairshare.NewQueue(server.ShareOptions(st, m.Config.ConcurrentRequests, m.Config.AcquireTimeout))
	instruments.WatchShare(share.InFlight)
	if len(m.Config.ReplicaURLs) > 0 {
		instruments.WatchReplicas(st.ReplicaMetrics)
	}
	if m.metricsServer, err = serveMetrics(m.Config.MetricsAddr, instruments, m.Log); err != nil {
		return err
	}
	listen := st.PrimaryConfig()
	if m.Config.DatabaseListenURL != "" {
		if listen, err = store.ListenConfig(m.Config.DatabaseListenURL); err != nil {
			return err
		}
	}
	// The limits every instance shares, when there is a Redis: opened
	// whether or not it answers now (the instance counts on its own until
	// it does).
	if m.shared, err = sharedlimit.Open(m.Config.RedisURL, m.Log, sharedlimit.Options{}); err != nil {
		return err
	}
	m.live = live.New(st.Client, st.Dialect(), listen, m.Log, live.Options{PerCompany: m.Config.Live.PerCompany, Buffer: m.Config.Live.Buffer,
		Shared: m.shared})
	liveCtx, stopLive := context.WithCancel(context.WithoutCancel(ctx))
	m.liveDone = make(chan struct{})
	m.stopLive = stopLive
	go func() { m.live.Run(liveCtx); close(m.liveDone) }()
	// The jobs a write causes are inserted with it whether or not this
	// instance works them: one with jobs off leaves them to another.
	if m.jobs, err = jobs.New(ctx, st, jobs.Options{Log: m.Log, Work: m.Config.Jobs == "on"}); err != nil {
		return err
	}
	instruments.WatchJobs(m.jobs.Stats)
	service := server.Handler(st, m.Log, server.Options{
		IDECompany: ideCompany, RESTBaseURL: m.Config.RESTBaseURL, Files: m.files, PublicURL: m.Config.PublicURL,
		RequestTimeout: m.Config.RequestTimeout, AllowedHosts: m.Config.AllowedHosts, Drain: m.drain,
		CORSOrigins: m.Config.CORSOrigins, AccessLog: m.Config.AccessLog, AccessLogSample: m.Config.AccessLogSample,
		MaxPhotoBytes: m.Config.MaxPhotoBytes, TreeCacheBytes: treeCacheOption(m.Config.TreeCacheBytes), ReadOnly: m.Config.Writes == "off", TimeZone: m.Config.TimeZone,
		Metrics: instruments, SeparateMetrics: m.Config.MetricsAddr != "", Tracing: m.Tracing, Auth: m.Config.Auth, Verifier: verifier,
		Limiter:           auth.NewSharedLimiter(m.Config.RateLimit, m.Config.RateBurst, m.shared),
		Share:             share,
		Budget:            fairshare.NewSharedBudget(m.Config.CostBudget, m.Config.CostRestoreRate, m.shared),
		SharedLimits:      m.shared,
		MaxResponseBytes:  m.Config.MaxResponseBytes,
		SigningLinkTTL:    m.Config.SigningLinkTTL,
		SignRatePerMinute: m.Config.SignRatePerMinute,
		TrustedProxies:    m.Config.TrustedProxies,
		Jobs:              m.jobs,
		Webhooks: webhooks.Options{MaxEndpoints: m.Config.WebhooksMaxEndpoints,
			AllowPrivate: m.Config.WebhooksAllowPrivate == "on"},
		Live: server.LiveOptions{Hub: m.live, PerConnection: m.Config.Live.PerConnection, Heartbeat: m.Config.Live.Heartbeat,
			Idle: m.Config.Live.Idle, Recheck: m.Config.Live.Recheck},
	})
	if m.Config.Jobs == "on" {
		if err := m.jobs.Start(ctx); err != nil {
			return err
		}
	}
	if m.server == nil {
		m.startServing(service)
	} else {
		m.handler.set(service)
	}
	m.logAuthentication()
	m.warnOfInstanceState()
	m.Log.Info("serving", "url", "http://"+m.listener.Addr().String()+"/", "graphql", "http://"+m.listener.Addr().String()+"/graphql")
	return nil
}

// startServing serves h on the listener.
func (m *Main) startServing(h http.Handler) {
	m.handler = &swappableHandler{}
	m.handler.set(h)
	m.server = &http.Server{
		Handler:           m.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		// Past the request's own deadline, so that its error gets written.
		WriteTimeout:   m.Config.RequestTimeout + 20*time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 64 << 10,
	}
	// Answers whole in memory leave in one write (internal/onewrite).
	onewrite.Serve(m.server)
	m.served = make(chan error, 1)
	listener := onewrite.Listen(m.listener)
	go func() { m.served <- m.server.Serve(listener) }()
}

// serveStartingPage serves the starting page until Run has the service
// ready, and says so.
func (m *Main) serveStartingPage() {
	m.startServing(startingPage())
	m.Log.Info("loading demo data (first start); the address answers meanwhile", "url", "http://"+m.listener.Addr().String()+"/")
}

// Wait serves until ctx is done, then shuts down gracefully; if the server
// stops by itself (its listener failed), it closes the rest and says why.
func (m *Main) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		m.Log.Info("shutting down")
		err := m.Close()
		m.logStopped(err)
		return err
	case err := <-m.served:
		m.served <- err // Close reports it
		err = m.Close()
		m.logStopped(err)
		return fmt.Errorf("the server stopped: %w", err)
	}
}

// logStopped is the server's last line: everything is closed (with what
// failed in closing, if anything), so that whoever reads the log knows the
// process ended as it should rather than being killed partway.
func (m *Main) logStopped(err error) {
	if err != nil {
		m.Log.Warn("stopped", "error", err)
		return
	}
	m.Log.Info("stopped")
}

// URL is the base URL the server answers on.
func (m *Main) URL() string { return "http://" + m.listener.Addr().String() }

// Close shuts down: for ShutdownDelay it keeps serving while /readyz says
// 503 and every answer closes its connection; then it stops accepting,
// waits up to ShutdownTimeout for the requests in flight, cuts those still
// running (and says which), and closes the database. Calling it again
// returns the first call's result.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Main) close() error {
	var errs []error
	timeout := m.Config.ShutdownTimeout
	if timeout <= 0 {
		timeout = defaultShutdownTimeout
	}
	// The jobs stop as the draining starts, beside the requests' end: no
	// new job is taken, and those running get the time the requests get
	// (one cut is run again later, by this instance or another); the
	// store closes after.
	var jobsStopped chan error
	if m.jobs != nil {
		jobsStopped = make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownDelay+timeout)
			defer cancel()
			jobsStopped <- m.jobs.Stop(ctx)
		}()
	}
	switch {
	case m.server != nil:
		m.drain.Start()
		if m.Config.ShutdownDelay > 0 {
			m.Log.Info("draining: not ready, closing connections after each answer", "for", m.Config.ShutdownDelay)
			time.Sleep(m.Config.ShutdownDelay)
		}
		m.server.SetKeepAlivesEnabled(false)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := m.server.Shutdown(ctx); err != nil {
			if ctx.Err() != nil {
				err = m.drain.CutError(timeout, time.Now())
			}
			// Closing their connections cancels the cut requests' contexts
			// (and so their SQL); they are given a moment to return before
			// the database closes under them, which each would report as
			// an internal error.
			errs = append(errs, err, m.server.Close())
			m.drain.Wait(requestsEndWithin)
		}
		if err := <-m.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	case m.listener != nil:
		errs = append(errs, m.listener.Close())
	}
	if m.stopLive != nil {
		m.stopLive()
		<-m.liveDone
	}
	if jobsStopped != nil {
		errs = append(errs, <-jobsStopped)
	}
	if m.metricsServer != nil {
		errs = append(errs, m.metricsServer.Close())
	}
	if m.shared != nil {
		errs = append(errs, m.shared.Close())
	}
	if m.store != nil {
		errs = append(errs, m.store.Close())
	}
	if m.files != nil {
		errs = append(errs, m.files.Close())
	}
	if m.restoreTemp != nil {
		m.restoreTemp()
	}
	return errors.Join(errs...)
}

// removeLeftovers removes what a process killed mid-upload left: every file
// of the temporary folder, which becomes the process's own, and the blob
// folder's temporary files of writes over an hour old (verify.StrayAge:
// younger ones may be another instance's writes under way on a shared
// folder). Photos stored without their records are verify's to find, and
// `verify --repair`'s to remove: that needs a walk of the whole store.
func (m *Main) removeLeftovers(ctx context.Context) error {
	temps, restore, err := m.Config.useTempFolder()
	if err != nil {
		return err
	}
	m.restoreTemp = restore
	writes, err := m.files.RemoveTemporaries(ctx, time.Now().Add(-verify.StrayAge))
	if err != nil {
		return fmt.Errorf("removing the temporary files of unfinished writes from the blob store: %w", err)
	}
	if temps+writes > 0 {
		m.Log.Info("removed what a stopped process left", "temporary_files", temps, "unfinished_writes", writes,
			"temp_dir", m.Config.tempFolder().path)
	}
	return nil
}

// warnOfInstanceState says what an instance keeps of its own that several
// instances of one PostgreSQL database must share: a URL signing key kept in
// its data folder (a photo URL one instance signs fails on another) and a
// blob store of its own (files one stores, another cannot serve). A
// file:// folder outside the data folder is taken as the shared folder
// docs/deployment.md recommends, mounted by every instance: nothing here
// can tell a mount from a local disk, and warning of the recommended
// set-up teaches operators to ignore the warning.
func (m *Main) warnOfInstanceState() {
	if !strings.HasPrefix(m.Config.DatabaseURL, "postgres") {
		return // SQLite: one process, one instance
	}
	if m.Config.SigningKey == "" {
		m.Log.Warn("the URL signing key is kept in " + filepath.Join(m.Config.DataDir, "url-signing.key") +
			": every instance serving this database needs the same INVENTORY_URL_SIGNING_KEY, or a photo URL one signs fails on another (docs/deployment.md)")
	}
	if m.Config.blobStoreOfItsOwn() {
		m.Log.Warn("files are stored in a folder of this instance: several instances need a shared store (s3://, or one folder they all mount, named by INVENTORY_BLOB_URL=file:///path outside the data folder) (docs/deployment.md)")
	}
}

// logAuthentication says how callers are authenticated (header mode beyond
// this machine never gets this far without a gateway in front: see
// refuseAnOpenHeaderMode).
func (m *Main) logAuthentication() {
	m.Log.Info("authentication", "mode", m.Config.Auth, "behind_gateway", m.Config.BehindGateway,
		"rate_limit", m.Config.RateLimit, "rate_burst", m.Config.RateBurst, "limits_shared_in_redis", m.Config.RedisURL != "")
}

// refuseAnOpenHeaderMode refuses to serve header mode beyond this machine
// unless the operator says a gateway in front authenticates callers and sets
// X-Company-Id (INVENTORY_BEHIND_GATEWAY=on): without one, anyone who
// reaches the address may name any company, and `docker run -p 8080:8080`
// would serve every company's records to whoever finds the port. Checked
// on the bound listener, before anything is opened or written, so that
// ":8080" and a host name count as what they resolve to.
func (m *Main) refuseAnOpenHeaderMode() error {
	if m.Config.Auth != auth.Header || m.Config.BehindGateway == "on" || loopback(m.listener.Addr()) {
		return nil
	}
	return fmt.Errorf("auth is header and %s takes connections from beyond this machine: anyone who reaches it could name any company in X-Company-Id. "+
		"Behind a gateway that authenticates callers and sets that header, set INVENTORY_BEHIND_GATEWAY=on (--behind-gateway on); "+
		"otherwise use INVENTORY_AUTH=apikey or jwt, or listen on 127.0.0.1 (docs/deployment.md)", m.listener.Addr())
}

// verifier checks the credentials of the configured mode: the API keys in
// the database, or tokens against the configured issuer.
func (m *Main) verifier(ctx context.Context) (auth.Verifier, error) {
	switch m.Config.Auth {
	case auth.APIKey:
		return auth.NewKeys(m.store.Client), nil
	case auth.JWT:
		return auth.NewJWT(ctx, m.Config.JWT)
	}
	return nil, nil
}

// loopback reports whether addr only takes connections from this machine.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// treeCacheOption is the server's option for the configured bound: none is
// negative there (0 means the default).
func treeCacheOption(bytes int64) int64 {
	if bytes == 0 {
		return -1
	}
	return bytes
}
