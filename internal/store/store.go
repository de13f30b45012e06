// Package store opens the database: SQLite through the pure-Go modernc driver
// (the embedded default) or PostgreSQL through pgx, behind one ent client.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
	_ "modernc.org/sqlite" // registers "sqlite"

	"github.com/propertyrecords/inventory/ent"
	_ "github.com/propertyrecords/inventory/ent/runtime" // registers the tenancy policies and interceptors: never open a client without it
	"github.com/propertyrecords/inventory/internal/migrations"
)

// Store is an open database.
type Store struct {
	Client  *ent.Client
	drv     dialect.Driver
	db      *sql.DB
	dialect string
}

// Option configures Open.
type Option func(*options)

type options struct {
	wrap func(dialect.Driver) dialect.Driver
}

// WithDriver wraps the driver every statement goes through (tests count
// statements with it).
func WithDriver(wrap func(dialect.Driver) dialect.Driver) Option {
	return func(o *options) { o.wrap = wrap }
}

// Open opens the database named by url: postgres:// (or postgresql://) opens
// PostgreSQL through pgx; anything else is an SQLite file path, whose folder is
// created if missing.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	name, db, err := openDB(url)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connecting to %s: %w", name, err)
	}
	var drv dialect.Driver = entsql.OpenDB(name, db)
	if o.wrap != nil {
		drv = o.wrap(drv)
	}
	return &Store{Client: ent.NewClient(ent.Driver(drv)), drv: drv, db: db, dialect: name}, nil
}

func openDB(url string) (string, *sql.DB, error) {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return "", nil, fmt.Errorf("store: opening PostgreSQL: %w", err)
		}
		// When a request's context ends (its deadline, or its client gone),
		// PostgreSQL is asked to cancel the statement, so that it stops working
		// (or waiting on a lock) for an answer nobody will read, and the
		// connection is kept: pgx's default closes it (and cancels too), which
		// costs a new connection for every request that ran out of time.
		cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
		}
		// ent passes ids as google/uuid values: encode them as the 16 bytes
		// they are (pgx-google-uuid), not through their driver.Valuer text, which
		// pgx first failed to send in binary, building an error each time.
		db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, conn *pgx.Conn) error {
			pgxuuid.Register(conn.TypeMap())
			return nil
		}))
		db.SetMaxOpenConns(16)
		db.SetMaxIdleConns(16)
		db.SetConnMaxIdleTime(5 * time.Minute)
		return dialect.Postgres, db, nil
	}
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "sqlite:")
	if path == "" {
		return "", nil, fmt.Errorf("store: empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", nil, fmt.Errorf("store: creating the database folder: %w", err)
	}
	// Foreign keys are off by default in SQLite; WAL lets readers run beside the
	// writer; timestamps are written in SQLite's own text form so they compare
	// correctly as text.
	dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)" +
		"&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_time_format=sqlite"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return "", nil, fmt.Errorf("store: opening SQLite: %w", err)
	}
	// SQLite runs in this process: connections beyond the CPUs only contend
	// for them, and each keeps a page cache of its own. Ten at 10 concurrent
	// requests cost 200 MB of RSS and half the throughput of two (on 2 cores).
	conns := max(2, runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return dialect.SQLite, db, nil
}

// Dialect is dialect.SQLite or dialect.Postgres.
func (s *Store) Dialect() string { return s.dialect }

// Migrate brings the schema up to date: PostgreSQL through the versioned
// migrations of internal/migrations, SQLite through ent's automatic
// migration. It returns the versions it applied (none on SQLite).
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	if s.dialect == dialect.Postgres {
		return migrations.Apply(ctx, s.db)
	}
	if err := s.Client.Schema.Create(ctx); err != nil {
		return nil, fmt.Errorf("store: migrating: %w", err)
	}
	return nil, nil
}

// Analyze refreshes the query planner's statistics. After a bulk load
// PostgreSQL would otherwise plan with empty ones until autovacuum catches
// up, and picks index scans that cost 20 times more (seen at a million items).
func (s *Store) Analyze(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, "ANALYZE")
	return err
}

// Stats are the connection pool's statistics.
func (s *Store) Stats() sql.DBStats { return s.db.Stats() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *Store) Close() error { return s.Client.Close() }
