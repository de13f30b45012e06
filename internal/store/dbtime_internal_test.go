package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/dbtime"
)

// TestAStatementPastItsRequestsDatabaseTimeIsStopped: a request's
// statements run within its database time (internal/dbtime): one that runs
// past it is stopped (PostgreSQL cancels it, SQLite is interrupted) and
// answered DEADLINE_EXCEEDED saying why, and the request's next statement
// is refused before it is sent, on both databases.
func TestAStatementPastItsRequestsDatabaseTimeIsStopped(t *testing.T) {
	url := filepath.Join(t.TempDir(), "dbtime.db")
	slow := `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c`
	if base := os.Getenv("TEST_DATABASE_URL"); base != "" {
		url, slow = base, `SELECT pg_sleep(30)`
	}
	st, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := dbtime.With(context.Background(), 200*time.Millisecond)
	start := time.Now()
	var rows entsql.Rows
	err = st.drv.Query(ctx, slow, []any{}, &rows)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	took := time.Since(start)
	if e, ok := err.(*apperr.Error); !ok || e.Code != apperr.DeadlineExceeded || !strings.Contains(e.Message, "database time") || !dbtime.Stopped(err) {
		t.Fatalf("a statement past its request's database time: %v (%T); want DEADLINE_EXCEEDED saying the database time was used", err, err)
	}
	if took > 5*time.Second { // not a speed claim: an unstopped statement runs 30 s and more
		t.Errorf("the statement was stopped after %s", took)
	}
	var next entsql.Rows
	if err := st.drv.Query(ctx, "SELECT 1", []any{}, &next); !dbtime.Stopped(err) {
		t.Errorf("the request's next statement: %v; want it refused, its database time spent", err)
	}
	// Without a budget (a command's statements), nothing is bounded here.
	var one entsql.Rows
	if err := st.drv.Query(context.Background(), "SELECT 1", []any{}, &one); err != nil {
		t.Errorf("a statement without a budget: %v", err)
	} else {
		one.Close()
	}
}

// TestTheServicesConnectionsCompileNoJIT: PostgreSQL's JIT compilation of a
// filter of many branches took over a second, in which no cancel is
// heeded; the service's connections turn it off (a URL may say otherwise).
func TestTheServicesConnectionsCompileNoJIT(t *testing.T) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL)")
	}
	for url, want := range map[string]string{base: "off", base + "&jit=on": "on"} {
		st, err := Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		var jit string
		if err := st.db.QueryRow("SHOW jit").Scan(&jit); err != nil || jit != want {
			t.Errorf("jit on the connections of %s: %q, %v; want %s", Redacted(url), jit, err, want)
		}
		st.Close()
	}
}
