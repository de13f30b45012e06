package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/signpage"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/treecache"
	"github.com/propertyrecords/inventory/internal/upload"
	"github.com/propertyrecords/inventory/internal/webhooks"
	"github.com/propertyrecords/inventory/rest"
)

// Config is the whole configuration, from environment variables with flags
// of the same meaning taking precedence.
type Config struct {
	Addr        string
	DatabaseURL string
	// DatabaseListenURL is a direct connection to the PostgreSQL primary for
	// the live updates' LISTEN, when DatabaseURL goes through a transaction
	// pooler, which cannot hold one ("": DatabaseURL).
	DatabaseListenURL string
	DataDir           string
	LogLevel          slog.Level
	RESTBaseURL       string
	BlobURL           string
	PublicURL         string
	SigningKey        string
	// RequestTimeout is every request's deadline: past it, its database work
	// is cancelled and the client told so.
	RequestTimeout time.Duration
	// DatabasePoolSize is how many statements use the database at once (0:
	// the dialect's default); past AcquireTimeout waiting for one, a request
	// is told the database is busy (503).
	DatabasePoolSize int
	AcquireTimeout   time.Duration
	// ConnectTimeout bounds each new PostgreSQL connection, the first included.
	ConnectTimeout time.Duration
	// ReplicaURLs are PostgreSQL standbys that serve the server's reads, as
	// long as they replay at most ReplicaMaxLag behind.
	// ReplicaTimeout bounds a statement on a standby: past it, the standby
	// leaves the rotation and the statement runs on the primary.
	ReplicaURLs    []string
	ReplicaMaxLag  time.Duration
	ReplicaTimeout time.Duration
	// ShutdownDelay is how long the server keeps serving, not ready and closing
	// each connection after its answer, once told to stop; ShutdownTimeout is
	// how long it then waits for requests in flight before cutting them.
	ShutdownDelay   time.Duration
	ShutdownTimeout time.Duration
	// AllowedHosts are the Host headers (besides loopback) that download URLs
	// may be built from when PublicURL is not set.
	AllowedHosts []string
	// CORSOrigins are the origins browser apps may call from ("*": any;
	// "none": CORS off).
	CORSOrigins []string
	// AuditLog is the level of the audit lines of reads across companies
	// (info, debug) or off.
	AuditLog string
	// MetricsAddr, when set, serves /metrics there instead of on Addr.
	MetricsAddr string
	// AccessLog is which requests get an access log line: sampled (every
	// failed or slow one, and one in AccessLogSample of the others, at info),
	// info or debug (every one, at that level), or off.
	AccessLog       string
	AccessLogSample int
	// TimeZone is where reports show times, beside UTC.
	TimeZone *time.Location
	// Writes is whether clients may write (GraphQL mutations): on or off.
	Writes string
	// Jobs is whether this instance works the durable jobs (internal/jobs):
	// on, or off for an instance that only inserts them, which another
	// instance on the database works.
	Jobs string
	// WebhooksAllowPrivate (on or off) lets webhooks go to loopback,
	// private and unique-local addresses, and over http: on-premises
	// receivers, tests. Link-local ones are refused even so.
	WebhooksAllowPrivate string
	// WebhooksMaxEndpoints bounds a company's webhook endpoints.
	WebhooksMaxEndpoints int
	// BehindGateway says that a gateway in front authenticates callers and
	// sets X-Company-Id (on or off): header mode serves beyond loopback only
	// with it on.
	BehindGateway string
	// MaxPhotoBytes bounds a photo sent to addItemPhoto.
	MaxPhotoBytes int64
	// TreeCacheBytes bounds the signed inventories' trees kept in memory
	// (0: none).
	TreeCacheBytes int64
	// Demo says whether an empty database gets the demo companies: on, off,
	// or auto (on for SQLite, the zero-set-up run; off for PostgreSQL, a
	// real database).
	Demo string
	// Auth is how callers are authenticated; JWT configures the jwt mode.
	Auth auth.Mode
	JWT  auth.JWTOptions
	// RateLimit is each caller's requests per second (0: no limit), in
	// bursts of up to RateBurst.
	RateLimit float64
	RateBurst int
	// MaxResponseBytes bounds each GraphQL answer.
	MaxResponseBytes int
	// ConcurrentRequests is how many requests run at once, shared fairly
	// between companies (0: the database pool's size plus the CPUs).
	ConcurrentRequests int
	// Live bounds the subscriptions (internal/live, server.LiveOptions).
	Live LiveConfig
	// CostBudget and CostRestoreRate are each company's budget of operation
	// cost and its refill a second (0: none).
	CostBudget      float64
	CostRestoreRate float64
	// RedisURL is the Redis that keeps the rate limits, cost budgets and
	// subscription caps for every instance ("": each instance its own).
	RedisURL string
	// SigningLinkTTL is how long a signature link lasts unless its request
	// says (requestSignature's expiresIn).
	SigningLinkTTL time.Duration
	// SignRatePerMinute is each address's requests a minute to the
	// signature links' pages (-1: none).
	SignRatePerMinute int
	// TrustedProxies are the proxies whose X-Forwarded-For names a signer's
	// address on those pages.
	TrustedProxies []netip.Prefix
}

// Defaults of the fair share (see internal/fairshare and docs/decisions.md).
const (
	// defaultCostBudget: two of the largest operations the price limit
	// admits, back to back. None in header mode, where the gateway sets each
	// caller's rates, as with INVENTORY_RATE_LIMIT.
	defaultCostBudget = 1_000_000
	// defaultCostRestoreRate: the IDE's query (about 39,000) two and a half
	// times a second, or fifty pages of B1 (about 2,000 each).
	defaultCostRestoreRate = 100_000
)

// setting is one configuration entry: its flag, its variable and its use.
type setting struct {
	flag, env, def, usage string
	target                *string
	serveOnly             bool
}

// takenBy says whether cmd takes the setting.
func (s setting) takenBy(cmd command) bool {
	return !s.serveOnly || cmd.serves || cmd.reportsProgress && s.flag == "metrics-addr"
}

// command is what one subcommand adds to the shared configuration.
type command struct {
	name, args, summary string
	serves              bool                   // takes the server's settings too
	reportsProgress     bool                   // long-running: takes --metrics-addr to show its progress
	flags               func(fs *flag.FlagSet) // its own flags, if any
}

// defaultRateLimit is each credential's rate when none is set. None in
// header mode: behind the gateway it implies, every caller shares its address.
const defaultRateLimit = 50

var serveCommand = command{name: "serve", summary: "serves the records over GraphQL and REST (the default command)", serves: true}

// parseConfig reads the environment (through getenv) and then args, for the
// serve command.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	cfg, _, err := parseCommandConfig(serveCommand, args, getenv, usage)
	return cfg, err
}

// parseCommandConfig reads the settings cmd takes and its own flags, and
// returns the arguments left after the flags.
func parseCommandConfig(cmd command, args []string, getenv func(string) string, usage io.Writer) (Config, []string, error) {
	var cfg Config
	var level, timeout, poolSize, acquireTimeout, connectTimeout, shutdownDelay, shutdownTimeout, allowedHosts, corsOrigins string
	var authMode, rateLimit, rateBurst, jwtSkew string
	var replicaURLs, replicaMaxLag, replicaTimeout string
	var maxResponseBytes, concurrentRequests, costBudget, costRestoreRate, accessLogSample string
	var perCompany, perConnection, subscriptionBuffer, heartbeat, idle, recheck string
	var timeZone, maxPhotoBytes, treeCacheBytes string
	var signingLinkTTL, signRate, trustedProxies string
	var webhooksMaxEndpoints string
	settings := []setting{
		{"addr", "INVENTORY_ADDR", "127.0.0.1:8080", "address to listen on", &cfg.Addr, true},
		{"database-url", "INVENTORY_DATABASE_URL", "", "SQLite file path, or postgres://... (default: <data-dir>/inventory.db)", &cfg.DatabaseURL, false},
		{"data-dir", "INVENTORY_DATA_DIR", "data", "folder for the SQLite database and stored files", &cfg.DataDir, false},
		{"log-level", "INVENTORY_LOG_LEVEL", "info", "debug, info, warn or error", &level, false},
		{"rest-base-url", "INVENTORY_REST_BASE_URL", rest.DefaultBaseURL, "path prefix of the REST group B endpoints ({base_url})", &cfg.RESTBaseURL, true},
		{"blob-url", "INVENTORY_BLOB_URL", "", "file store: s3://, gs://, azblob://, file:// or mem:// (default: <data-dir>/blobs)", &cfg.BlobURL, false},
		{"public-url", "INVENTORY_PUBLIC_URL", "", "scheme and host of download URLs (default: the request's)", &cfg.PublicURL, true},
		{"url-signing-key", "INVENTORY_URL_SIGNING_KEY", "", "secret that signs photo URLs (default: kept in <data-dir>/url-signing.key)", &cfg.SigningKey, true},
		{"request-timeout", "INVENTORY_REQUEST_TIMEOUT", server.DefaultRequestTimeout.String(), "deadline of each request, database work included (e.g. 10s, 1m)", &timeout, true},
		{"database-pool-size", "INVENTORY_DATABASE_POOL_SIZE", "", fmt.Sprintf("database connections used at once (default: %d on PostgreSQL, the CPUs on SQLite)", store.DefaultPostgresPoolSize), &poolSize, false},
		{"database-acquire-timeout", "INVENTORY_DATABASE_ACQUIRE_TIMEOUT", store.DefaultAcquireTimeout.String(), "how long a request waits, in all, for a place and free database connections before a 503", &acquireTimeout, false},
		{"database-connect-timeout", "INVENTORY_DATABASE_CONNECT_TIMEOUT", store.DefaultConnectTimeout.String(), "bound on connecting to PostgreSQL, at start too", &connectTimeout, false},
		{"database-listen-url", "INVENTORY_DATABASE_LISTEN_URL", "", "a direct postgres:// connection to the primary for the live updates' LISTEN, when --database-url goes through a transaction pooler such as PgBouncer (default: --database-url)", &cfg.DatabaseListenURL, true},
		{"database-replica-urls", "INVENTORY_DATABASE_REPLICA_URLS", "", "comma-separated PostgreSQL standbys that serve reads, in turn (writes stay on --database-url)", &replicaURLs, true},
		{"database-replica-max-lag", "INVENTORY_DATABASE_REPLICA_MAX_LAG", store.DefaultReplicaMaxLag.String(), "how far behind the primary a standby may replay and still serve reads", &replicaMaxLag, true},
		{"database-replica-timeout", "INVENTORY_DATABASE_REPLICA_TIMEOUT", store.DefaultReplicaTimeout.String(), "how long a statement waits for a standby before the standby leaves the rotation and the statement runs on the primary", &replicaTimeout, true},
		{"shutdown-delay", "INVENTORY_SHUTDOWN_DELAY", defaultShutdownDelay.String(), "on SIGTERM, how long to keep serving while /readyz says 503 and connections close after each answer", &shutdownDelay, true},
		{"shutdown-timeout", "INVENTORY_SHUTDOWN_TIMEOUT", defaultShutdownTimeout.String(), "then how long requests in flight may take before they are cut", &shutdownTimeout, true},
		{"allowed-hosts", "INVENTORY_ALLOWED_HOSTS", "", "comma-separated Host names download URLs may name when --public-url is unset (loopback always)", &allowedHosts, true},
		{"cors-origins", "INVENTORY_CORS_ORIGINS", "*", "comma-separated origins browser apps may call from (https://app.example.com); * any, none for no CORS", &corsOrigins, true},
		{"tree-cache-bytes", "INVENTORY_TREE_CACHE_BYTES", strconv.Itoa(treecache.DefaultMaxBytes), "bytes of signed inventories' trees kept in memory for the queries that read them again (a signed tree never changes); 0 for none", &treeCacheBytes, true},
		{"max-photo-bytes", "INVENTORY_MAX_PHOTO_BYTES", strconv.Itoa(upload.DefaultMaxPhotoBytes), "most bytes one photo sent to addItemPhoto may hold", &maxPhotoBytes, true},
		{"writes", "INVENTORY_WRITES", "on", "whether clients may make and sign inventories (GraphQL mutations): on, or off for reads only", &cfg.Writes, true},
		{"jobs", "INVENTORY_JOBS", "on", "whether this instance works the durable jobs (the signed PDFs, webhook deliveries, an import's thumbnails): on, or off to only insert them for another instance on the database", &cfg.Jobs, true},
		{"webhooks-allow-private", "INVENTORY_WEBHOOKS_ALLOW_PRIVATE", "off", "on lets webhooks go to loopback and private addresses, and over http (on-premises receivers); link-local ones are refused even so", &cfg.WebhooksAllowPrivate, true},
		{"webhooks-max-endpoints", "INVENTORY_WEBHOOKS_MAX_ENDPOINTS", strconv.Itoa(webhooks.DefaultMaxEndpoints), "webhook endpoints a company may register, from 1 to 100", &webhooksMaxEndpoints, true},
		{"demo", "INVENTORY_DEMO", "auto", "load the demo companies into an empty database: on, off, or auto (on for SQLite, off for PostgreSQL)", &cfg.Demo, true},
		{"time-zone", "INVENTORY_TIME_ZONE", report.DefaultTimeZone, "the zone (IANA name) reports show times in, beside UTC; UTC for UTC alone", &timeZone, false},
		{"audit-log", "INVENTORY_AUDIT_LOG", "info", "level of the audit line of each read across companies: info, debug or off", &cfg.AuditLog, false},
		{"metrics-addr", "INVENTORY_METRICS_ADDR", "", "address to serve /metrics on, apart from the API (default: on --addr); import and generate serve their progress there", &cfg.MetricsAddr, true},
		{"access-log", "INVENTORY_ACCESS_LOG", "sampled", "which requests get a log line, with its request id: sampled (at info, every failed or slow one and one in --access-log-sample of the others), info or debug (every one), or off", &cfg.AccessLog, true},
		{"access-log-sample", "INVENTORY_ACCESS_LOG_SAMPLE", strconv.Itoa(server.DefaultAccessLogSample), "sampled access log: one in how many successful requests under a second is logged", &accessLogSample, true},
		{"behind-gateway", "INVENTORY_BEHIND_GATEWAY", "off", "on when a gateway in front authenticates callers and sets X-Company-Id: header mode refuses to listen beyond loopback without it", &cfg.BehindGateway, true},
		{"auth", "INVENTORY_AUTH", "header", "how callers are authenticated: header (X-Company-Id, set by a gateway), apikey or jwt", &authMode, true},
		{"rate-limit", "INVENTORY_RATE_LIMIT", "", "requests per second per caller, 0 for none (default: 50 per credential in apikey and jwt modes, none in header mode)", &rateLimit, true},
		{"rate-burst", "INVENTORY_RATE_BURST", "100", "requests a caller may send at once before the rate applies", &rateBurst, true},
		{"max-response-bytes", "INVENTORY_MAX_RESPONSE_BYTES", strconv.Itoa(graph.DefaultMaxResponseBytes), "most bytes one GraphQL answer may hold; past it, RESPONSE_TOO_LARGE", &maxResponseBytes, true},
		{"concurrent-requests", "INVENTORY_CONCURRENT_REQUESTS", "", "requests served at once, shared fairly between companies (default: the database pool size plus the CPUs)", &concurrentRequests, true},
		{"cost-budget", "INVENTORY_COST_BUDGET", "", "each company's budget of operation cost, 0 for none (default: 1000000 in apikey and jwt modes, none in header mode)", &costBudget, true},
		{"cost-restore-rate", "INVENTORY_COST_RESTORE_RATE", strconv.Itoa(defaultCostRestoreRate), "cost points a company's budget regains each second", &costRestoreRate, true},
		{"redis-url", "INVENTORY_REDIS_URL", "", "redis:// or rediss:// URL of a Redis that keeps the rate limits, cost budgets and subscription caps for every instance (default: each instance keeps its own; while Redis does not answer, too)", &cfg.RedisURL, true},
		{"subscriptions-per-company", "INVENTORY_SUBSCRIPTIONS_PER_COMPANY", strconv.Itoa(live.DefaultPerCompany), "subscriptions a company may hold at once on one instance (on all of them with --redis-url)", &perCompany, true},
		{"subscriptions-per-connection", "INVENTORY_SUBSCRIPTIONS_PER_CONNECTION", strconv.Itoa(server.DefaultSubscriptionsPerConnection), "subscriptions one WebSocket connection may hold", &perConnection, true},
		{"subscription-buffer", "INVENTORY_SUBSCRIPTION_BUFFER", strconv.Itoa(live.DefaultBuffer), "events a subscription may fall behind before it is ended (a client too slow to read)", &subscriptionBuffer, true},
		{"live-heartbeat", "INVENTORY_LIVE_HEARTBEAT", server.DefaultHeartbeat.String(), "how often a subscription's connection is pinged; a WebSocket client that misses two pings is gone", &heartbeat, true},
		{"live-idle-timeout", "INVENTORY_LIVE_IDLE_TIMEOUT", server.DefaultIdle.String(), "a WebSocket connection without a subscription for this long is closed", &idle, true},
		{"live-recheck", "INVENTORY_LIVE_RECHECK", server.DefaultRecheck.String(), "how often a subscription's credential is verified again: a revoked key's subscriptions end within it", &recheck, true},
		{"jwt-jwks-url", "INVENTORY_JWT_JWKS_URL", "", "jwt mode: the issuer's JWKS URL (keys cached and refreshed)", &cfg.JWT.JWKSURL, true},
		{"jwt-key-file", "INVENTORY_JWT_KEY_FILE", "", "jwt mode: a local public key (PEM) or JWKS file, instead of the URL", &cfg.JWT.KeyFile, true},
		{"jwt-issuer", "INVENTORY_JWT_ISSUER", "", "jwt mode: the iss tokens must have", &cfg.JWT.Issuer, true},
		{"jwt-audience", "INVENTORY_JWT_AUDIENCE", "", "jwt mode: the aud tokens must have", &cfg.JWT.Audience, true},
		{"jwt-company-claim", "INVENTORY_JWT_COMPANY_CLAIM", "company_id", "jwt mode: the claim that holds the company's UUID", &cfg.JWT.CompanyClaim, true},
		{"jwt-clock-skew", "INVENTORY_JWT_CLOCK_SKEW", "1m", "jwt mode: clock difference tolerated on exp, nbf and iat", &jwtSkew, true},
		{"signing-link-ttl", "INVENTORY_SIGNING_LINK_TTL", records.DefaultLinkTTL.String(), "how long a signature link (requestSignature) lasts unless its request says, from 1m to 720h", &signingLinkTTL, true},
		{"sign-rate-limit", "INVENTORY_SIGN_RATE_LIMIT", strconv.Itoa(signpage.DefaultRatePerMinute), "requests a minute each address may send to the signature links' pages (/sign/), 0 for none", &signRate, true},
		{"trusted-proxies", "INVENTORY_TRUSTED_PROXIES", "", "comma-separated CIDRs of the proxies whose X-Forwarded-For names a signer's address on the /sign/ pages (default: none; the connection's address)", &trustedProxies, true},
	}
	fs := flag.NewFlagSet("inventoryd "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		invocation := cmd.name
		if cmd.serves {
			invocation = "[" + cmd.name + "]"
		}
		fmt.Fprintf(usage, "inventoryd %s: %s.\n\nUsage: inventoryd %s [flags] %s\n\n", cmd.name, cmd.summary, invocation, cmd.args)
		// Each table's columns as wide as their widest cell, whatever
		// names are added.
		table := func(title string, rows [][]string) {
			fmt.Fprintf(usage, "%s\n", title)
			w := tabwriter.NewWriter(usage, 0, 0, 2, ' ', 0)
			for _, row := range rows {
				fmt.Fprintf(w, "  %s\n", strings.Join(row, "\t"))
			}
			w.Flush()
		}
		if cmd.serves {
			var rows [][]string
			for _, c := range commands {
				rows = append(rows, []string{c.name, c.summary})
			}
			table("Commands:", rows)
			fmt.Fprintf(usage, "\n")
		}
		rows := [][]string{{"flag", "environment", "default", "meaning"}}
		for _, s := range settings {
			if s.takenBy(cmd) {
				rows = append(rows, []string{"--" + s.flag, s.env, s.def, s.usage})
			}
		}
		table("Settings (a flag overrides its environment variable):", rows)
		if cmd.flags != nil {
			shared := map[string]bool{}
			for _, s := range settings {
				shared[s.flag] = true
			}
			var own [][]string
			fs.VisitAll(func(f *flag.Flag) {
				if !shared[f.Name] {
					own = append(own, []string{"--" + f.Name, fmt.Sprintf("%s (default %q)", f.Usage, f.DefValue)})
				}
			})
			fmt.Fprintf(usage, "\n")
			table("Flags of "+cmd.name+":", own)
		}
	}
	for _, s := range settings {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		if s.takenBy(cmd) {
			fs.StringVar(s.target, s.flag, def, s.usage)
		} else {
			*s.target = def
		}
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, nil, err
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return Config{}, nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	type duration struct {
		name, value string
		target      *time.Duration
		zeroOK      bool
	}
	durations := []duration{
		{"database acquire timeout", acquireTimeout, &cfg.AcquireTimeout, false},
		{"database connect timeout", connectTimeout, &cfg.ConnectTimeout, false},
	}
	if cmd.serves {
		durations = append(durations, []duration{
			{"database replica max lag", replicaMaxLag, &cfg.ReplicaMaxLag, false},
			{"database replica timeout", replicaTimeout, &cfg.ReplicaTimeout, false},
			{"request timeout", timeout, &cfg.RequestTimeout, false},
			{"shutdown delay", shutdownDelay, &cfg.ShutdownDelay, true},
			{"shutdown timeout", shutdownTimeout, &cfg.ShutdownTimeout, false},
			{"live heartbeat", heartbeat, &cfg.Live.Heartbeat, false},
			{"live idle timeout", idle, &cfg.Live.Idle, false},
			{"live recheck", recheck, &cfg.Live.Recheck, false},
		}...)
	}
	for _, d := range durations {
		v, err := time.ParseDuration(d.value)
		if err != nil || v < 0 || (v == 0 && !d.zeroOK) {
			return Config{}, nil, fmt.Errorf("%s %q: give a positive duration such as 10s", d.name, d.value)
		}
		*d.target = v
	}
	if poolSize != "" {
		n, err := strconv.Atoi(poolSize)
		if err != nil || n < 1 || n > 1000 {
			return Config{}, nil, fmt.Errorf("database pool size %q: give a whole number from 1 to 1000", poolSize)
		}
		cfg.DatabasePoolSize = n
	}
	for u := range strings.SplitSeq(replicaURLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.ReplicaURLs = append(cfg.ReplicaURLs, u)
		}
	}
	for h := range strings.SplitSeq(allowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.AllowedHosts = append(cfg.AllowedHosts, strings.ToLower(h))
		}
	}
	for o := range strings.SplitSeq(corsOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	var zoneErr error
	if cfg.TimeZone, zoneErr = time.LoadLocation(timeZone); zoneErr != nil || timeZone == "" || timeZone == "Local" {
		return Config{}, nil, fmt.Errorf("time zone %q: give an IANA zone name, such as America/Bogota, or UTC", timeZone)
	}
	if len(cfg.CORSOrigins) > 1 && (slices.Contains(cfg.CORSOrigins, "none") || slices.Contains(cfg.CORSOrigins, "*")) {
		return Config{}, nil, fmt.Errorf("cors origins %q: give origins, or * alone, or none alone", corsOrigins)
	}
	if cmd.serves {
		switch cfg.Demo {
		case "auto", "on", "off":
		default:
			return Config{}, nil, fmt.Errorf("demo %q: use on, off or auto", cfg.Demo)
		}
		if cfg.Writes != "on" && cfg.Writes != "off" {
			return Config{}, nil, fmt.Errorf("writes %q: use on or off", cfg.Writes)
		}
		if cfg.Jobs != "on" && cfg.Jobs != "off" {
			return Config{}, nil, fmt.Errorf("jobs %q: use on or off", cfg.Jobs)
		}
		if cfg.WebhooksAllowPrivate != "on" && cfg.WebhooksAllowPrivate != "off" {
			return Config{}, nil, fmt.Errorf("webhooks allow private %q: use on or off", cfg.WebhooksAllowPrivate)
		}
		if n, err := strconv.Atoi(webhooksMaxEndpoints); err != nil || n < 1 || n > 100 {
			return Config{}, nil, fmt.Errorf("webhooks max endpoints %q: give a whole number from 1 to 100", webhooksMaxEndpoints)
		} else {
			cfg.WebhooksMaxEndpoints = n
		}
		if cfg.BehindGateway != "on" && cfg.BehindGateway != "off" {
			return Config{}, nil, fmt.Errorf("behind gateway %q: use on or off", cfg.BehindGateway)
		}
		if n, err := strconv.ParseInt(treeCacheBytes, 10, 64); err != nil || n < 0 {
			return Config{}, nil, fmt.Errorf("tree cache bytes %q: give a number of bytes, 0 for none", treeCacheBytes)
		} else {
			cfg.TreeCacheBytes = n
		}
		if n, err := strconv.ParseInt(maxPhotoBytes, 10, 64); err != nil || n < 1024 {
			return Config{}, nil, fmt.Errorf("max photo bytes %q: give a number of bytes, at least 1024", maxPhotoBytes)
		} else {
			cfg.MaxPhotoBytes = n
		}
		switch cfg.AccessLog {
		case "sampled", "info", "debug", "off":
		default:
			return Config{}, nil, fmt.Errorf("access log %q: use sampled, info, debug or off", cfg.AccessLog)
		}
		var err error
		if cfg.AccessLogSample, err = strconv.Atoi(accessLogSample); err != nil || cfg.AccessLogSample < 1 || cfg.AccessLogSample > 1_000_000 {
			return Config{}, nil, fmt.Errorf("access log sample %q: give a whole number from 1 (every request)", accessLogSample)
		}
		if cfg.Auth, err = auth.ParseMode(authMode); err != nil {
			return Config{}, nil, err
		}
		if cfg.JWT.Skew, err = time.ParseDuration(jwtSkew); err != nil || cfg.JWT.Skew < 0 {
			return Config{}, nil, fmt.Errorf("jwt clock skew %q: give a duration such as 1m", jwtSkew)
		}
		cfg.RateLimit = 0
		if cfg.Auth != auth.Header {
			cfg.RateLimit = defaultRateLimit
		}
		if rateLimit != "" {
			if cfg.RateLimit, err = strconv.ParseFloat(rateLimit, 64); err != nil || cfg.RateLimit < 0 || cfg.RateLimit > 1e6 {
				return Config{}, nil, fmt.Errorf("rate limit %q: give requests per second, 0 for none", rateLimit)
			}
		}
		if cfg.RateBurst, err = strconv.Atoi(rateBurst); err != nil || cfg.RateBurst < 1 || cfg.RateBurst > 1e6 {
			return Config{}, nil, fmt.Errorf("rate burst %q: give a whole number from 1", rateBurst)
		}
		if cfg.MaxResponseBytes, err = strconv.Atoi(maxResponseBytes); err != nil || cfg.MaxResponseBytes < 1024 {
			return Config{}, nil, fmt.Errorf("max response bytes %q: give a whole number of bytes from 1024", maxResponseBytes)
		}
		for _, bound := range []struct {
			name, value string
			target      *int
		}{
			{"subscriptions per company", perCompany, &cfg.Live.PerCompany},
			{"subscriptions per connection", perConnection, &cfg.Live.PerConnection},
			{"subscription buffer", subscriptionBuffer, &cfg.Live.Buffer},
		} {
			if *bound.target, err = strconv.Atoi(bound.value); err != nil || *bound.target < 1 || *bound.target > 1_000_000 {
				return Config{}, nil, fmt.Errorf("%s %q: give a whole number from 1", bound.name, bound.value)
			}
		}
		if concurrentRequests != "" {
			if cfg.ConcurrentRequests, err = strconv.Atoi(concurrentRequests); err != nil || cfg.ConcurrentRequests < 1 || cfg.ConcurrentRequests > 100_000 {
				return Config{}, nil, fmt.Errorf("concurrent requests %q: give a whole number from 1", concurrentRequests)
			}
		}
		if cfg.Auth != auth.Header {
			cfg.CostBudget = defaultCostBudget
		}
		if costBudget != "" {
			if cfg.CostBudget, err = strconv.ParseFloat(costBudget, 64); err != nil || cfg.CostBudget < 0 || cfg.CostBudget > 1e12 {
				return Config{}, nil, fmt.Errorf("cost budget %q: give points, 0 for none", costBudget)
			}
		}
		if cfg.CostRestoreRate, err = strconv.ParseFloat(costRestoreRate, 64); err != nil || cfg.CostRestoreRate <= 0 || cfg.CostRestoreRate > 1e12 {
			return Config{}, nil, fmt.Errorf("cost restore rate %q: give points a second, more than 0", costRestoreRate)
		}
		if u, err := url.Parse(cfg.RedisURL); cfg.RedisURL != "" && (err != nil || u.Scheme != "redis" && u.Scheme != "rediss" || u.Host == "") {
			return Config{}, nil, fmt.Errorf("redis url %q: give redis://host:port/db or rediss://… (TLS)", redactedURL(cfg.RedisURL))
		}
		if cfg.SigningLinkTTL, err = time.ParseDuration(signingLinkTTL); err != nil || cfg.SigningLinkTTL < records.MinLinkTTL || cfg.SigningLinkTTL > records.MaxLinkTTL {
			return Config{}, nil, fmt.Errorf("signing link ttl %q: give a duration from 1m to 720h (30 days), such as 72h", signingLinkTTL)
		}
		if cfg.SignRatePerMinute, err = strconv.Atoi(signRate); err != nil || cfg.SignRatePerMinute < 0 || cfg.SignRatePerMinute > 1_000_000 {
			return Config{}, nil, fmt.Errorf("sign rate limit %q: give requests a minute, 0 for none", signRate)
		} else if cfg.SignRatePerMinute == 0 {
			cfg.SignRatePerMinute = -1 // none (server.Options: 0 is the default)
		}
		if cfg.TrustedProxies, err = parseProxies(trustedProxies); err != nil {
			return Config{}, nil, err
		}
	}
	switch cfg.AuditLog {
	case "info", "debug", "off":
	default:
		return Config{}, nil, fmt.Errorf("audit log %q: use info, debug or off", cfg.AuditLog)
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = filepath.Join(cfg.DataDir, "inventory.db")
	}
	return cfg, fs.Args(), nil
}

// parseProxies reads comma-separated CIDRs; a bare address is its own /32
// (or /128).
func parseProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxies %q: give CIDRs such as 10.0.0.0/8, comma-separated", list)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, prefix.Masked())
	}
	return out, nil
}

// LogValue logs the configuration with the database password masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("database_url", store.Redacted(c.DatabaseURL)),
		slog.String("database_listen_url", store.Redacted(c.DatabaseListenURL)),
		slog.String("data_dir", c.DataDir),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("rest_base_url", c.RESTBaseURL),
		slog.String("blob_url", store.Redacted(c.BlobURL)),
		slog.String("public_url", c.PublicURL),
		slog.Bool("url_signing_key_set", c.SigningKey != ""),
		slog.Duration("request_timeout", c.RequestTimeout),
		slog.Int("database_pool_size", c.DatabasePoolSize),
		slog.Duration("database_acquire_timeout", c.AcquireTimeout),
		slog.Duration("database_connect_timeout", c.ConnectTimeout),
		slog.Any("database_replica_urls", maskPasswords(c.ReplicaURLs)),
		slog.Duration("database_replica_max_lag", c.ReplicaMaxLag),
		slog.Duration("database_replica_timeout", c.ReplicaTimeout),
		slog.Duration("shutdown_delay", c.ShutdownDelay),
		slog.Duration("shutdown_timeout", c.ShutdownTimeout),
		slog.Any("allowed_hosts", c.AllowedHosts),
		slog.Any("cors_origins", c.CORSOrigins),
		slog.String("time_zone", c.TimeZone.String()),
		slog.String("demo", c.Demo),
		slog.String("writes", c.Writes),
		slog.String("jobs", c.Jobs),
		slog.Int64("max_photo_bytes", c.MaxPhotoBytes),
		slog.Int64("tree_cache_bytes", c.TreeCacheBytes),
		slog.String("audit_log", c.AuditLog),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.String("access_log", c.AccessLog),
		slog.Int("access_log_sample", c.AccessLogSample),
		slog.Int("subscriptions_per_company", c.Live.PerCompany),
		slog.Int("subscriptions_per_connection", c.Live.PerConnection),
		slog.Int("subscription_buffer", c.Live.Buffer),
		slog.Duration("live_heartbeat", c.Live.Heartbeat),
		slog.Duration("live_idle_timeout", c.Live.Idle),
		slog.Duration("live_recheck", c.Live.Recheck),
		slog.String("auth", string(c.Auth)),
		slog.String("behind_gateway", c.BehindGateway),
		slog.Float64("rate_limit", c.RateLimit),
		slog.Int("rate_burst", c.RateBurst),
		slog.String("redis_url", redactedURL(c.RedisURL)),
		slog.Duration("signing_link_ttl", c.SigningLinkTTL),
		slog.Int("sign_rate_limit", max(c.SignRatePerMinute, 0)),
		slog.Any("trusted_proxies", c.TrustedProxies),
	)
}

// storeOptions are the database settings, as store.Open takes them.
func (c Config) storeOptions() []store.Option {
	opts := []store.Option{store.WithPool(c.DatabasePoolSize, c.AcquireTimeout), store.WithConnectTimeout(c.ConnectTimeout)}
	if len(c.ReplicaURLs) > 0 {
		opts = append(opts, store.WithReplicas(c.ReplicaURLs, c.ReplicaMaxLag), store.WithReplicaTimeout(c.ReplicaTimeout))
	}
	return opts
}

// redactedURL is u with its password masked, as net/url masks it ("" stays "").
func redactedURL(u string) string {
	if parsed, err := url.Parse(u); err == nil {
		return parsed.Redacted()
	}
	return "(unreadable)"
}

func maskPasswords(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = store.Redacted(u)
	}
	return out
}

// signingKey is the configured key, or one kept in the data directory (made
// on first start) so that photo URLs stay valid across restarts.
func (c Config) signingKey() ([]byte, error) {
	if c.SigningKey != "" {
		return []byte(c.SigningKey), nil
	}
	path := filepath.Join(c.DataDir, "url-signing.key")
	if key, err := os.ReadFile(path); err == nil && len(key) >= 32 {
		return key, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	encoded := []byte(hex.EncodeToString(key))
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, encoded, 0o600); err != nil {
		return nil, fmt.Errorf("keeping the URL signing key: %w", err)
	}
	return encoded, nil
}

// loadsDemo reports whether an empty database gets the demo companies: their
// ids are well known, so a real database (PostgreSQL, unless asked) never
// gets them unasked.
func (c Config) loadsDemo() bool {
	switch c.Demo {
	case "on":
		return true
	case "auto":
		return !strings.HasPrefix(strings.ToLower(c.DatabaseURL), "postgres")
	}
	return false
}

// LiveConfig bounds the subscriptions: per company and connection, how far
// one may fall behind, and its connection's heartbeat, idle timeout and
// credential recheck.
type LiveConfig struct {
	PerCompany, PerConnection, Buffer int
	Heartbeat, Idle, Recheck          time.Duration
}
