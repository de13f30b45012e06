package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A statement longer than the bound is cut by PostgreSQL itself, even with
// no deadline in the caller's context (so no cancel request is ever sent),
// and reads DEADLINE_EXCEEDED, not INTERNAL.
func TestPostgresCutsStatementsPastTheStatementTimeout(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("PostgreSQL only: set " + testdb.EnvURL)
	}
	st := testdb.Open(t, store.WithStatementTimeout(100*time.Millisecond))
	// Ten seconds: were the bound missing, the statement would finish.
	var rows entsql.Rows
	err := store.DriverOf(st).Query(context.Background(), `SELECT pg_sleep(10)`, []any{}, &rows)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("pg_sleep(10) under a 100 ms statement timeout: %v, want PostgreSQL's 57014 (query_canceled)", err)
	}
	if code := apperr.CodeOf(err); code != apperr.DeadlineExceeded {
		t.Errorf("a statement cut by the statement timeout: code %s, want %s", code, apperr.DeadlineExceeded)
	}
	// A statement within it is untouched.
	if err := store.DriverOf(st).Exec(context.Background(), `SELECT pg_sleep(0.01)`, []any{}, nil); err != nil {
		t.Errorf("a statement within the bound: %v", err)
	}
}

// migrationLock is internal/migrations' advisory lock key. Were it to
// change, the migration below would not wait, and the test fails saying so.
const migrationLock = 0x696e76656e746f72

// Migrations are not the requests' business: a server bounded at 100 ms
// still migrates while another instance holds the migration lock longer
// than that (and would build an index on a large table for longer still).
func TestMigrationsRunWithoutTheStatementTimeout(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("PostgreSQL only: set " + testdb.EnvURL)
	}
	url := testdb.URL(t)
	st, err := store.Open(context.Background(), url, store.WithStatementTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Another instance migrating: it holds the lock until this one waits.
	other, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	holder, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(context.Background(), `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := st.Migrate(context.Background()); done <- err }()
	// Held past the bound: until the migrator is seen waiting for it, then
	// as long again as the bound, so that a bounded wait would have failed.
	for waiting := 0; waiting == 0; {
		if err := other.QueryRow(`SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND classid::bigint = $1::bigint >> 32 AND objid::bigint = $1::bigint & 4294967295`, int64(migrationLock)).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("migrating while another instance holds the lock: %v before waiting for it", err)
		default:
		}
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := holder.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("migrating under a 100 ms statement timeout, after waiting for another instance: %v, want success", err)
	}
}
