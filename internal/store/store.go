// Package store opens the database: SQLite through the pure-Go modernc driver
// (the embedded default) or PostgreSQL through pgx, behind one ent client.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/migrate"
	_ "github.com/propertyrecords/inventory/ent/runtime" // registers the tenancy policies and interceptors: never open a client without it
	"github.com/propertyrecords/inventory/internal/catalogue"
	"github.com/propertyrecords/inventory/internal/migrations"
	"github.com/propertyrecords/inventory/internal/store/pgxread"
)

// Store is an open database.
type Store struct {
	Client  *ent.Client
	drv     dialect.Driver
	guard   *guard
	db      *sql.DB
	dialect string
	router  *router // nil without standbys
	// sqlitePath is the SQLite database file ("" on PostgreSQL).
	sqlitePath string
	// unbounded connects to PostgreSQL without the statement timeout, for
	// migrations; nil when there is none.
	unbounded *pgx.ConnConfig
	// primary connects to the PostgreSQL primary (nil on SQLite).
	primary *pgx.ConnConfig
	// poolSize is the guard's number of connections (setPool).
	poolSize int
}

// Option configures Open.
type Option func(*options)

type options struct {
	wrap           func(dialect.Driver) dialect.Driver
	poolSize       int
	acquireTimeout time.Duration
	connectTimeout time.Duration
	replicas       []string
	replicaMaxLag  time.Duration
	replicaTimeout time.Duration
	// statementTimeout bounds each PostgreSQL statement (0: no bound).
	statementTimeout time.Duration
	// jitAsConfigured leaves PostgreSQL's jit setting alone: set when the
	// server refused it as a start-up parameter (PgBouncer).
	jitAsConfigured bool
}

// Defaults of the pool and connection settings.
const (
	// DefaultPostgresPoolSize suits one PostgreSQL of a few cores: past it,
	// statements only queue on its CPUs.
	DefaultPostgresPoolSize = 16
	// DefaultAcquireTimeout is how long a statement waits for a free
	// connection before its request is told the database is busy.
	DefaultAcquireTimeout = 2 * time.Second
	// DefaultConnectTimeout bounds each new PostgreSQL connection, and the
	// first one at start: a server that accepts but never answers must not
	// hang start-up.
	DefaultConnectTimeout = 5 * time.Second
)

// DefaultSQLitePoolSize is as many connections as CPUs: SQLite runs in this
// process, so more only contend for them, and each keeps a page cache of its
// own. Ten at 10 concurrent requests cost 200 MB of RSS and half the
// throughput of two (on 2 cores).
func DefaultSQLitePoolSize() int { return max(2, runtime.GOMAXPROCS(0)) }

// WithPool sets how many statements (or transactions) use the database at
// once (0: the dialect's default), and how long one waits for its turn before
// failing as apperr.Unavailable (0: DefaultAcquireTimeout).
func WithPool(size int, acquireTimeout time.Duration) Option {
	return func(o *options) { o.poolSize, o.acquireTimeout = size, acquireTimeout }
}

// WithConnectTimeout bounds connecting to PostgreSQL (0: DefaultConnectTimeout;
// a connect_timeout in the URL takes precedence).
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) { o.connectTimeout = d }
}

// WithStatementTimeout bounds each statement on PostgreSQL, on the server
// (its statement_timeout, a parameter of each connection): the most any
// statement may cost it, even should cancelling it on the request's
// deadline fail (the cancel request is lost, or the network between is
// cut). The server passes its request timeout, which no statement of a
// request outlives anyway; the long commands (import, generate, migrate)
// pass none, and migrations run without it wherever they run. A
// statement_timeout in the URL takes precedence. SQLite runs in this
// process, where cancelling always reaches it.
func WithStatementTimeout(d time.Duration) Option {
	return func(o *options) { o.statementTimeout = d }
}

// WithDriver wraps the driver every statement goes through (tests count
// statements with it).
func WithDriver(wrap func(dialect.Driver) dialect.Driver) Option {
	return func(o *options) { o.wrap = wrap }
}

// AcceptedURLs says what Open takes, for error messages and usage.
const AcceptedURLs = "postgres://… or postgresql://… (PostgreSQL), or an SQLite file path, optionally as sqlite:PATH or sqlite://PATH"

// Open opens the database named by url: postgres:// (or postgresql://) opens
// PostgreSQL through pgx; sqlite:, sqlite:// or a plain path opens an SQLite
// file, whose folder is created if missing. Any other scheme is refused, so
// that a mistyped PostgreSQL URL is not taken for a file name.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	o := options{acquireTimeout: DefaultAcquireTimeout, connectTimeout: DefaultConnectTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.acquireTimeout <= 0 {
		o.acquireTimeout = DefaultAcquireTimeout
	}
	if o.connectTimeout <= 0 {
		o.connectTimeout = DefaultConnectTimeout
	}
	name, db, unbounded, primary, err := openDB(url, &o)
	if err != nil {
		return nil, err
	}
	var sqlitePath string
	if name == dialect.SQLite {
		sqlitePath = sqliteFile(url)
	}
	pingCtx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	err = db.PingContext(pingCtx)
	if err != nil && name == dialect.Postgres && !o.jitAsConfigured && strings.Contains(err.Error(), "unsupported startup parameter: jit") {
		// PgBouncer passes on only the start-up parameters it knows: jit is
		// then the role's (docs/deployment.md says to set it off there).
		db.Close()
		o.jitAsConfigured = true
		if name, db, unbounded, primary, err = openDB(url, &o); err != nil {
			return nil, err
		}
		err = db.PingContext(pingCtx)
	}
	if err != nil {
		db.Close()
		if pingCtx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("store: connecting to %s: no answer within %s (set a longer connect timeout if it is only slow): %w", name, o.connectTimeout, err)
		}
		if strings.Contains(err.Error(), "unsupported startup parameter: statement_timeout") {
			return nil, fmt.Errorf("store: connecting to %s: %w (behind PgBouncer, add statement_timeout to its ignore_startup_parameters and set it on the role: docs/deployment.md)", name, err)
		}
		return nil, fmt.Errorf("store: connecting to %s: %w", name, err)
	}
	g := newGuard(openDriver(name, db), o.poolSize, o.acquireTimeout)
	var drv dialect.Driver = g
	var r *router
	if len(o.replicas) > 0 {
		if name != dialect.Postgres {
			db.Close()
			return nil, fmt.Errorf("store: replicas are PostgreSQL standbys; the primary is %s", name)
		}
		replicas, err := openReplicas(o.replicas, &o)
		if err != nil {
			db.Close()
			return nil, err
		}
		if o.replicaMaxLag <= 0 {
			o.replicaMaxLag = DefaultReplicaMaxLag
		}
		if o.replicaTimeout <= 0 {
			o.replicaTimeout = DefaultReplicaTimeout
		}
		r = newRouter(g, db, replicas, o.replicaMaxLag, o.replicaTimeout)
		drv = r
	}
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	// Materials are only ever inserted: each is read once, then kept.
	client := ent.NewClient(ent.Driver(drv), ent.Catalogue(catalogue.New(catalogue.DefaultSize)))
	return &Store{Client: client, drv: drv, guard: g, db: db, dialect: name, router: r, sqlitePath: sqlitePath,
		unbounded: unbounded, primary: primary, poolSize: o.poolSize}, nil
}

// openDriver is ent's driver over db: on PostgreSQL, one that reads rows
// through pgx itself (internal/store/pgxread); on SQLite, one that keeps its reads
// prepared (sqliteReader).
func openDriver(name string, db *sql.DB) dialect.Driver {
	if name == dialect.Postgres {
		return pgxread.NewReader(db)
	}
	return newSQLiteReader(db)
}

// scheme is the lower-cased scheme of url ("" for a plain path).
func scheme(url string) string {
	s, _, found := strings.Cut(url, "://")
	if !found {
		if s, _, found = strings.Cut(url, ":"); !found || !strings.EqualFold(s, "sqlite") {
			return ""
		}
	}
	return strings.ToLower(s)
}

// openDB opens url's database; on PostgreSQL with a statement timeout, it
// also returns the configuration without it, for migrations.
func openDB(url string, o *options) (string, *sql.DB, *pgx.ConnConfig, *pgx.ConnConfig, error) {
	switch scheme(url) {
	case "postgres", "postgresql":
		return openPostgres(url, o)
	case "", "sqlite":
		name, db, err := openSQLite(url, o)
		return name, db, nil, nil, err
	default:
		return "", nil, nil, nil, fmt.Errorf("store: unknown database URL scheme %q: use %s", scheme(url)+"://", AcceptedURLs)
	}
}

func openPostgres(url string, o *options) (string, *sql.DB, *pgx.ConnConfig, *pgx.ConnConfig, error) {
	// Schemes are case-insensitive (RFC 3986); pgx wants them in lower case.
	s, rest, _ := strings.Cut(url, "://")
	url = strings.ToLower(s) + "://" + rest
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("store: opening PostgreSQL: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = o.connectTimeout
	}
	// When a request's context ends (its deadline, or its client gone),
	// PostgreSQL is asked to cancel the statement, so that it stops working
	// (or waiting on a lock) for an answer nobody will read, and the
	// connection is kept: pgx's default closes it (and cancels too), which
	// costs a new connection for every request that ran out of time.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	// No JIT compilation: the service's statements are short, and a filter
	// of many branches (69 or branches under a count, priced within the
	// limit) made PostgreSQL compile for over a second, in which it does not
	// heed a cancel, so that the request's database time (internal/dbtime)
	// ran a second over: 2.0 s with it, 0.43 s without, on the 1.18M-item
	// set. A URL that sets jit keeps its own.
	if _, set := cfg.RuntimeParams["jit"]; !set && !o.jitAsConfigured {
		cfg.RuntimeParams["jit"] = "off"
	}
	var unbounded *pgx.ConnConfig
	if _, set := cfg.RuntimeParams["statement_timeout"]; !set && o.statementTimeout > 0 {
		unbounded = cfg.Copy()
		// Whole milliseconds, PostgreSQL's unit for it, never rounded to 0
		// (which would mean no bound).
		cfg.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(o.statementTimeout.Milliseconds(), 1), 10)
	}
	// ent passes ids as google/uuid values (an inserted row's by pointer)
	// and money as decimals: encode them in binary as they are
	// (pgxread.RegisterTypes), not through their driver.Valuer text, which
	// pgx first failed to send in binary, building an error each time.
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, conn *pgx.Conn) error {
		pgxread.RegisterTypes(conn.TypeMap())
		return nil
	}))
	if o.poolSize <= 0 {
		o.poolSize = DefaultPostgresPoolSize
	}
	setPool(db, o.poolSize)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return dialect.Postgres, db, unbounded, cfg.Copy(), nil
}

// setPool sizes database/sql's pool one above the guard's: the spare
// connection is for readiness checks and migrations, which do not go
// through the guard and must not wait behind a full pool.
func setPool(db *sql.DB, size int) {
	db.SetMaxOpenConns(size + 1)
	db.SetMaxIdleConns(size + 1)
}

// sqliteFile is the file an SQLite URL names.
func sqliteFile(url string) string {
	if scheme(url) == "sqlite" {
		return strings.TrimPrefix(url[len("sqlite:"):], "//")
	}
	return url
}

func openSQLite(url string, o *options) (string, *sql.DB, error) {
	path := sqliteFile(url)
	if path == "" {
		return "", nil, fmt.Errorf("store: empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", nil, fmt.Errorf("store: creating the database folder: %w", err)
	}
	db, err := sql.Open("sqlite", SQLiteDSN(path))
	if err != nil {
		return "", nil, fmt.Errorf("store: opening SQLite: %w", err)
	}
	if o.poolSize <= 0 {
		o.poolSize = DefaultSQLitePoolSize()
	}
	setPool(db, o.poolSize)
	return dialect.SQLite, db, nil
}

// Dialect is dialect.SQLite or dialect.Postgres.
func (s *Store) Dialect() string { return s.dialect }

// ListenConfig is the configuration of a connection of its own to the
// PostgreSQL primary at url, for the live updates' LISTEN when the store's
// URL goes through a transaction pooler (INVENTORY_DATABASE_LISTEN_URL).
func ListenConfig(url string) (*pgx.ConnConfig, error) {
	if s := scheme(url); s != "postgres" && s != "postgresql" {
		return nil, fmt.Errorf("store: the listen URL %s is not postgres://", Redacted(url))
	}
	s, rest, _ := strings.Cut(url, "://")
	cfg, err := pgx.ParseConfig(strings.ToLower(s) + "://" + rest)
	if err != nil {
		return nil, fmt.Errorf("store: the listen URL: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	return cfg, nil
}

// PrimaryConfig is a connection's configuration to the PostgreSQL primary,
// for a connection of its own outside the pool (LISTEN); nil on SQLite.
func (s *Store) PrimaryConfig() *pgx.ConnConfig {
	if s.primary == nil {
		return nil
	}
	return s.primary.Copy()
}

// Migrate brings the schema up to date: PostgreSQL through the versioned
// migrations of internal/migrations, SQLite through ent's automatic
// migration. It returns the versions it applied (none on SQLite).
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	if s.dialect == dialect.Postgres && s.unbounded != nil {
		// A migration may rewrite a table or build an index over it, or wait
		// for another instance's migration: no request's bound fits it.
		db := stdlib.OpenDB(*s.unbounded)
		defer db.Close()
		return migrations.Apply(ctx, db)
	}
	if s.dialect == dialect.Postgres {
		return migrations.Apply(ctx, s.db)
	}
	// Processes started at once on a fresh file (two imports, a server and
	// an import) would each find no tables and each create them: all but
	// one failed with "table already exists". PostgreSQL's migrations take
	// an advisory lock; SQLite's take a lock file beside the database (its
	// name and "-migrate.lock"), and each process then reads the schema the
	// one before it left, so ent's diff finds nothing more to do.
	// ent's schema tables are package state that a migration writes: two
	// stores of one process migrating at once race on them.
	sqliteMigrations.Lock()
	defer sqliteMigrations.Unlock()
	if !strings.HasPrefix(s.sqlitePath, ":memory:") {
		unlock, err := lockFile(ctx, s.sqlitePath+"-migrate.lock")
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	// What PostgreSQL's migration files copy by hand: a database from before
	// signature_sort_date_desc gets the column with its default, which is
	// right for unsigned inventories only. Asked first, so that the copy
	// (a scan of every inventory) runs once, not at every start.
	var columns, has int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(name = 'signature_sort_date_desc'), 0)
		FROM pragma_table_info('inventories')`).Scan(&columns, &has); err != nil {
		return nil, fmt.Errorf("store: migrating: %w", err)
	}
	// Atlas reads the schema with rows it asserts are *sql.Rows, so the
	// migration goes around the guard, as PostgreSQL's does.
	// Indexes the schema no longer names are dropped, as PostgreSQL's
	// migration files drop them: an index replaced by a wider one only
	// costs writes.
	if err := ent.NewClient(ent.Driver(s.guard.Driver)).Schema.Create(ctx, migrate.WithDropIndex(true)); err != nil {
		return nil, fmt.Errorf("store: migrating: %w", err)
	}
	if columns > 0 && has == 0 {
		if _, err := s.db.ExecContext(ctx, `UPDATE inventories SET signature_sort_date_desc = signature_date
			WHERE signature_date IS NOT NULL`); err != nil {
			return nil, fmt.Errorf("store: migrating: %w", err)
		}
	}
	if err := sqliteTallies(ctx, s.db); err != nil {
		return nil, fmt.Errorf("store: migrating: %w", err)
	}
	// A file analyzed by an earlier version keeps its samples until now.
	if err := s.dropStat4Samples(ctx); err != nil {
		return nil, fmt.Errorf("store: migrating: %w", err)
	}
	// River's job tables (internal/jobs), by River's own migrator under the
	// same lock: PostgreSQL has them as migration files, SQLite has no
	// files to keep them in.
	m, err := rivermigrate.New(riversqlite.New(s.db), nil)
	if err != nil {
		return nil, fmt.Errorf("store: migrating River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("store: migrating River's tables: %w", err)
	}
	return nil, nil
}

// SQLiteDSN is how the SQLite file at path is opened: River's own pool
// (internal/jobs) opens it as the store does.
func SQLiteDSN(path string) string {
	// Foreign keys are off by default in SQLite; WAL lets readers run beside the
	// writer; timestamps are written in SQLite's own text form so they compare
	// correctly as text. Transactions begin IMMEDIATE, taking the write lock
	// at once: a deferred one that reads and then writes cannot wait for
	// another writer (SQLite answers SQLITE_BUSY at once, whatever the busy
	// timeout, to avoid a deadlock), while an immediate one waits its turn.
	// The busy timeout comes first: the pragmas run in order, and switching a
	// fresh file to WAL while another process does failed at once with
	// SQLITE_BUSY when no timeout was set yet.
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_time_format=sqlite&_txlock=immediate"
}

// SQLitePath is the SQLite file ("" on PostgreSQL); a path starting
// ":memory:" is a database of this process alone.
func (s *Store) SQLitePath() string { return s.sqlitePath }

// DB is the store's pool, for River (internal/jobs), whose statements do not
// go through ent. On SQLite, a second pool opened on the same file is
// River's own; a :memory: database has only this one.
func (s *Store) DB() *sql.DB { return s.db }

// UnboundedConfig is the configuration of a connection to the PostgreSQL
// primary without the requests' statement timeout (nil on SQLite): River's
// own pool, whose job fetches and maintenance are no request's.
func (s *Store) UnboundedConfig() *pgx.ConnConfig {
	if s.unbounded != nil {
		return s.unbounded.Copy()
	}
	return s.PrimaryConfig()
}

// Analyze refreshes the query planner's statistics. After a bulk load
// PostgreSQL would otherwise plan with empty ones until autovacuum catches
// up, and picks index scans that cost 20 times more (seen at a million items).
func (s *Store) Analyze(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "ANALYZE"); err != nil {
		return err
	}
	if s.dialect == dialect.SQLite {
		return s.dropStat4Samples(ctx)
	}
	return nil
}

// dropStat4Samples deletes the index samples SQLite's ANALYZE keeps in
// sqlite_stat4, and keeps its per-index statistics (sqlite_stat1), which
// are what the planner chooses among the service's indexes by. With samples,
// a statement whose parameter meets an indexed column is planned again at
// every execution, for the value bound (SQLite's STAT4, on in modernc's
// build): the prepared statements kept by sqliteReader were parsed and
// planned anew each time, 17% of the server's CPU on a page of 20
// inventories. The pool's idle connections, whose statistics are read when
// they first read the schema, are closed, so that the next ones read these.
func (s *Store) dropStat4Samples(ctx context.Context) error {
	var samples int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_stat4'`).Scan(&samples)
	if err == nil && samples > 0 {
		err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM sqlite_stat4 LIMIT 1)`).Scan(&samples)
	}
	if err != nil || samples == 0 {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sqlite_stat4`); err != nil {
		return err
	}
	s.db.SetMaxIdleConns(0)
	setPool(s.db, s.poolSize)
	return nil
}

// Stats are the connection pool's statistics.
func (s *Store) Stats() sql.DBStats { return s.db.Stats() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Pool is the use of the connections that statements take turns on.
type Pool struct {
	InUse, Size int
	// Waiting statements have found every connection in use.
	Waiting int64
	// Refusing: a statement gave up waiting for a connection (and its
	// request was told UNAVAILABLE) within the last acquire timeout.
	Refusing bool
}

// Exhausted reports whether the pool is stuck: every connection is in use
// and statements are being refused for want of one. A full pool whose
// waiters get their turn is only busy, as any loaded instance is: reporting
// it would take instances out of rotation exactly when they are loaded.
func (p Pool) Exhausted() bool { return p.InUse >= p.Size && p.Refusing }

// Pool reports the pool's use now.
func (s *Store) Pool() Pool {
	inUse, size, waiting, refusing := s.guard.busy()
	return Pool{InUse: inUse, Size: size, Waiting: waiting, Refusing: refusing}
}

// Close closes the database.
func (s *Store) Close() error { return s.Client.Close() }

// sqliteTallyTriggers keep company_tallies (ent/schema/companytally.go) as
// PostgreSQL's migration 20261128194240_company_tallies.sql does: in the
// transaction of every insert and delete of an inventory or a property,
// whoever writes. SQLite's triggers are per row.
var sqliteTallyTriggers = func() (triggers []string) {
	for _, table := range tallyTables {
		triggers = append(triggers, fmt.Sprintf(`CREATE TRIGGER %[1]s_tally_insert AFTER INSERT ON %[1]s BEGIN
	INSERT INTO company_tallies (id, %[1]s) VALUES (NEW.company_id, 1)
		ON CONFLICT (id) DO UPDATE SET %[1]s = %[1]s + 1;
END`, table), fmt.Sprintf(`CREATE TRIGGER %[1]s_tally_delete AFTER DELETE ON %[1]s BEGIN
	UPDATE company_tallies SET %[1]s = %[1]s - 1 WHERE id = OLD.company_id;
END`, table))
	}
	return triggers
}()

// tallyTables are the tables company_tallies counts, each in its column of
// the same name.
var tallyTables = []string{"inventories", "properties"}

// sqliteTallies makes sure the tally triggers are there and as written
// above, and counts the tallies afresh when any was not: a database from
// before them, and one whose table ent's automatic migration rebuilt (which
// drops the table's triggers with it). Only then is the write lock taken,
// and the triggers looked at again under it, held to the commit, so that no
// write falls between the count and the triggers.
func sqliteTallies(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if kept, err := tallyTriggersKept(ctx, conn); err != nil || kept {
		return err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err = createTallyTriggers(ctx, conn); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// tallyTriggersKept reports whether the tally triggers are all there, as
// sqliteTallyTriggers writes them.
func tallyTriggersKept(ctx context.Context, conn *sql.Conn) (bool, error) {
	rows, err := conn.QueryContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\_tally\_%' ESCAPE '\'`)
	if err != nil {
		return false, err
	}
	var present []string
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			rows.Close()
			return false, err
		}
		present = append(present, text)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	slices.Sort(present)
	return slices.Equal(present, slices.Sorted(slices.Values(sqliteTallyTriggers))), nil
}

func createTallyTriggers(ctx context.Context, conn *sql.Conn) error {
	if kept, err := tallyTriggersKept(ctx, conn); err != nil || kept {
		return err
	}
	var statements []string
	for _, table := range tallyTables {
		statements = append(statements, "DROP TRIGGER IF EXISTS "+table+"_tally_insert", "DROP TRIGGER IF EXISTS "+table+"_tally_delete")
	}
	statements = append(statements, sqliteTallyTriggers...)
	statements = append(statements, `DELETE FROM company_tallies`, `INSERT INTO company_tallies (id, inventories, properties)
	SELECT company_id, SUM(inventories), SUM(properties) FROM (
		SELECT company_id, COUNT(*) AS inventories, 0 AS properties FROM inventories GROUP BY company_id
		UNION ALL
		SELECT company_id, 0, COUNT(*) FROM properties GROUP BY company_id
	) GROUP BY company_id`)
	for _, statement := range statements {
		if _, err := conn.ExecContext(ctx, statement); err != nil {
			return err
		}
	}
	return nil
}

// sqliteMigrations serializes the SQLite migrations of this process.
var sqliteMigrations sync.Mutex
