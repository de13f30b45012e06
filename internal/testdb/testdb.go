// Package testdb gives each test a fresh, migrated database of its own:
// SQLite in a temporary folder by default, or PostgreSQL when
// TEST_DATABASE_URL is set, in a schema created for the test and dropped after.
// A Dataset gives each test its own copy of a database filled once per test
// process (on PostgreSQL a database cloned from a template).
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/propertyrecords/inventory/internal/store"
)

// EnvURL names the PostgreSQL server tests run against when set.
const EnvURL = "TEST_DATABASE_URL"

// Open returns a migrated store that lives as long as the test.
func Open(tb testing.TB, opts ...store.Option) *store.Store {
	tb.Helper()
	return OpenURL(tb, URL(tb), opts...)
}

// OpenURL returns a migrated store on the database at url (one of a
// Cluster's, say) that is closed when the test ends.
func OpenURL(tb testing.TB, url string, opts ...store.Option) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), url, opts...)
	if err != nil {
		tb.Fatalf("opening the test database: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating the test database: %v", err)
	}
	return st
}

// quietAudit keeps tenant.Unrestricted's audit lines (each data load writes
// one to the default logger) out of test output, where they would also split
// benchmark result lines. Tests that read logs give the code a logger of their own.
var quietAudit sync.Once

// URL returns the address of a new, empty database for the test.
func URL(tb testing.TB) string {
	tb.Helper()
	quietAudit.Do(func() { slog.SetDefault(slog.New(slog.DiscardHandler)) })
	base := os.Getenv(EnvURL)
	if base == "" {
		return filepath.Join(tb.TempDir(), "test.db")
	}
	schema := "t_" + randomHex(tb)
	admin := adminDB(tb, base)
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		tb.Fatalf("creating schema %s on %s: %v (under CI an unreachable PostgreSQL is a failure)", schema, store.Redacted(base), err)
	}
	tb.Cleanup(func() {
		if _, err := admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			tb.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s is not a URL: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema) // pgx sends unknown parameters as session settings
	u.RawQuery = q.Encode()
	return u.String()
}

// Postgres reports whether tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvURL) != "" }

// SQLiteOnly skips a test of SQLite itself (the zero-configuration file, its
// locking) in the run on PostgreSQL, where it would test SQLite again: the
// run without TEST_DATABASE_URL, which CI makes beside it, covers it.
func SQLiteOnly(tb testing.TB) {
	tb.Helper()
	if Postgres() {
		tb.Skip("tests SQLite itself: the run without " + EnvURL + " covers it")
	}
}

var (
	adminOnce sync.Once
	admin     *sql.DB
	adminErr  error
)

func adminDB(tb testing.TB, base string) *sql.DB {
	tb.Helper()
	admin, err := openAdmin(base)
	if err != nil {
		tb.Fatal(err)
	}
	return admin
}

// openAdmin is the process's one connection pool to TEST_DATABASE_URL, for
// creating and dropping schemas and databases.
func openAdmin(base string) (*sql.DB, error) {
	adminOnce.Do(func() {
		admin, adminErr = sql.Open("pgx", base)
		if adminErr == nil {
			adminErr = admin.Ping()
		}
	})
	if adminErr != nil {
		return nil, fmt.Errorf("connecting to %s at %s: %v", EnvURL, store.Redacted(base), adminErr)
	}
	return admin, nil
}

func randomHex(tb testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// Counter is a driver that counts the statements sent through it outside
// transactions: the reads a request makes. With InTransactions it counts
// those of transactions too, BEGIN and COMMIT (or ROLLBACK) included: what
// a write costs.
type Counter struct {
	dialect.Driver
	InTransactions bool
	n              atomic.Int64
	mu             sync.Mutex
	seen           []statement
}

// Tx begins a transaction, counted when InTransactions is set.
func (c *Counter) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := c.Driver.Tx(ctx)
	if err != nil || !c.InTransactions {
		return tx, err
	}
	c.note("BEGIN", nil)
	return &countedTx{Tx: tx, c: c}, nil
}

// countedTx counts the statements of a transaction.
type countedTx struct {
	dialect.Tx
	c *Counter
}

// Unwrap is the transaction it wraps, for (*ent.Tx).SQLTx: River inserts
// a job in the *sql.Tx underneath.
func (t *countedTx) Unwrap() dialect.Tx { return t.Tx }

func (t *countedTx) Exec(ctx context.Context, query string, args, v any) error {
	t.c.note(query, args)
	return t.Tx.Exec(ctx, query, args, v)
}

func (t *countedTx) Query(ctx context.Context, query string, args, v any) error {
	t.c.note(query, args)
	return t.Tx.Query(ctx, query, args, v)
}

func (t *countedTx) Commit() error {
	t.c.note("COMMIT", nil)
	return t.Tx.Commit()
}

func (t *countedTx) Rollback() error {
	t.c.note("ROLLBACK", nil)
	return t.Tx.Rollback()
}

type statement struct {
	query string
	args  any
}

// Option returns a store option that routes statements through c.
func (c *Counter) Option() store.Option {
	return store.WithDriver(func(d dialect.Driver) dialect.Driver {
		c.Driver = d
		return c
	})
}

func (c *Counter) note(query string, args any) {
	c.n.Add(1)
	c.mu.Lock()
	c.seen = append(c.seen, statement{query, args})
	c.mu.Unlock()
}

func (c *Counter) Exec(ctx context.Context, query string, args, v any) error {
	c.note(query, args)
	return c.Driver.Exec(ctx, query, args, v)
}

func (c *Counter) Query(ctx context.Context, query string, args, v any) error {
	c.note(query, args)
	return c.Driver.Query(ctx, query, args, v)
}

// Find returns the first statement counted that contains part, with its
// arguments.
func (c *Counter) Find(part string) (query string, args any, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seen {
		if strings.Contains(s.query, part) {
			return s.query, s.args, true
		}
	}
	return "", nil, false
}

// Plan returns how the database runs query, one line per plan node:
// PostgreSQL's EXPLAIN with sequential scans and sorts priced out (a plan
// without a Sort then shows an index that yields the order, whatever the
// table's size), SQLite's EXPLAIN QUERY PLAN.
func (c *Counter) Plan(ctx context.Context, query string, args any) (string, error) {
	tx, err := c.Driver.Tx(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	explain := "EXPLAIN QUERY PLAN "
	if c.Driver.Dialect() == dialect.Postgres {
		explain = "EXPLAIN "
		for _, setting := range []string{"enable_seqscan", "enable_sort", "enable_incremental_sort"} {
			if err := tx.Exec(ctx, "SET LOCAL "+setting+" = off", []any{}, nil); err != nil {
				return "", err
			}
		}
	}
	var rows entsql.Rows
	if err := tx.Query(ctx, explain+query, args, &rows); err != nil {
		return "", err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var plan []string
	for rows.Next() {
		// PostgreSQL: one column of text; SQLite: id, parent, notused, detail.
		values := make([]any, len(columns))
		for i := range values {
			values[i] = new(any)
		}
		if err := rows.Scan(values...); err != nil {
			return "", err
		}
		switch line := (*values[len(values)-1].(*any)).(type) {
		case []byte:
			plan = append(plan, string(line))
		default:
			plan = append(plan, fmt.Sprint(line))
		}
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// Reset forgets what was counted.
func (c *Counter) Reset() {
	c.n.Store(0)
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
}

// Count is the number of statements since the last Reset.
func (c *Counter) Count() int { return int(c.n.Load()) }

// Statements lists them, for failure messages.
func (c *Counter) Statements() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	queries := make([]string, len(c.seen))
	for i, s := range c.seen {
		queries[i] = s.query
	}
	return strings.Join(queries, "\n")
}

// Schema lists every index and constraint of the test's schema, as the
// database defines them, sorted: two schemas compare as text.
func Schema(t testing.TB, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) string {
	t.Helper()
	query := `SELECT type || ' ' || name || ': ' || sql FROM sqlite_master WHERE sql IS NOT NULL`
	if Postgres() {
		query = `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL
			SELECT conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid)
			FROM pg_constraint WHERE connamespace = current_schema()::regnamespace`
	}
	rows, err := q.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var def string
		if err := rows.Scan(&def); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, def)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(defs)
	return strings.Join(defs, "\n")
}
