package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

func TestUnknownDatabaseSchemesAreRefusedNotTakenForFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, url := range []string{"postgre://postgres@127.0.0.1/test", "mysql://root@127.0.0.1/test", "postgress://x", "http://example.com/db"} {
		_, err := store.Open(context.Background(), url)
		if err == nil || !strings.Contains(err.Error(), "unknown database URL scheme") || !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("%s: got %v, want an unknown-scheme error listing the accepted forms", url, err)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("refused URLs left files behind: %v", entries)
	}
	for _, url := range []string{"plain.db", "sqlite:prefixed.db", "sqlite://slashed.db", "SQLITE:upper.db"} {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		st.Close()
	}
	for _, name := range []string{"plain.db", "prefixed.db", "slashed.db", "upper.db"} {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("SQLite file %s not created: %v", name, err)
		}
	}
}

func TestSchemesAreCaseInsensitive(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL)")
	}
	url := testdb.URL(t)
	upper := strings.ToUpper(url[:strings.Index(url, "://")]) + url[strings.Index(url, "://"):]
	st, err := store.Open(context.Background(), upper)
	if err != nil {
		t.Fatalf("%s: %v", upper, err)
	}
	defer st.Close()
	if st.Dialect() != "postgres" {
		t.Errorf("dialect %s, want postgres", st.Dialect())
	}
}

// A server that accepts connections and never answers must not hang the
// start: the connect timeout ends it with an error that says so.
func TestConnectingToASilentServerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := store.Open(context.Background(), "postgres://postgres@"+l.Addr().String()+"/test?sslmode=disable",
			store.WithConnectTimeout(300*time.Millisecond))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("got %v, want a connect timeout naming 300ms", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("store.Open still waiting on a silent server after 30 s")
	}
}

// With every connection held (here by an open transaction: in production,
// say, by requests waiting on a locked table), a statement waits at most
// the acquire timeout and fails as UNAVAILABLE; the pool is full while it
// waits, and reports itself exhausted once it refused the statement; once
// the connection is freed, statements run.
func TestAFullPoolFailsStatementsAsUnavailableAfterTheAcquireTimeout(t *testing.T) {
	// The pool reports itself exhausted for one acquire timeout after a
	// refusal: a second leaves the check below room on a loaded machine.
	st := testdb.Open(t, store.WithPool(1, time.Second))
	ctx := tenant.Unrestricted(context.Background(), "test")
	tx, err := st.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := st.Pool(); p.InUse != 1 || p.Size != 1 || p.Exhausted() {
		t.Errorf("pool with one transaction and no waiter: %+v", p)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Client.Property.Query().Count(ctx)
		done <- err
	}()
	waitFor(t, func() bool { return st.Pool().Waiting == 1 })
	if p := st.Pool(); p.Exhausted() {
		t.Errorf("pool with a waiter not yet refused: %+v, want not exhausted (only busy)", p)
	}
	err = <-done
	if apperr.CodeOf(err) != apperr.Unavailable || !strings.Contains(err.Error(), "all 1 connections stayed in use for as long as a request waits for one (1s)") {
		t.Errorf("statement behind a full pool: got %v (code %s), want UNAVAILABLE naming the pool and the wait", err, apperr.CodeOf(err))
	}
	if p := st.Pool(); !p.Exhausted() {
		t.Errorf("full pool that just refused a statement: %+v, want exhausted", p)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Client.Property.Query().Count(ctx); err != nil {
		t.Errorf("after the transaction ended: %v", err)
	}
	if p := st.Pool(); p.InUse != 0 || p.Waiting != 0 {
		t.Errorf("pool after all statements ended: %+v, want empty", p)
	}
}

// The acquire timeout is what a request waits for connections in all: its
// statements share it. Behind a full pool, a request's first statement waits
// it out and the next ones are refused at once, where each used to wait
// the whole timeout again; a statement outside any request still waits its
// own timeout.
func TestARequestWaitsForConnectionsAtMostTheAcquireTimeoutInAll(t *testing.T) {
	const timeout = 500 * time.Millisecond
	st := testdb.Open(t, store.WithPool(1, timeout))
	if st.AcquireTimeout() != timeout {
		t.Fatalf("AcquireTimeout() = %s, want %s", st.AcquireTimeout(), timeout)
	}
	ctx := tenant.Unrestricted(context.Background(), "test")
	tx, err := st.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	request := waitbudget.With(ctx, timeout)
	start := time.Now()
	for i := range 3 {
		if _, err := st.Client.Property.Query().Count(request); apperr.CodeOf(err) != apperr.Unavailable {
			t.Fatalf("statement %d behind a full pool: %v, want UNAVAILABLE", i+1, err)
		}
	}
	// Three statements that each waited would take three timeouts; the
	// bound leaves a loaded machine room above one.
	if elapsed := time.Since(start); elapsed < timeout || elapsed >= 2*timeout {
		t.Errorf("three statements of one request refused after %s in all, want one acquire timeout (%s)", elapsed, timeout)
	}

	start = time.Now()
	if _, err := st.Client.Property.Query().Count(ctx); apperr.CodeOf(err) != apperr.Unavailable {
		t.Fatalf("a statement outside a request: %v, want UNAVAILABLE", err)
	}
	if elapsed := time.Since(start); elapsed < timeout {
		t.Errorf("a statement outside a request refused after %s, want its own acquire timeout (%s)", elapsed, timeout)
	}
}

// Every statement and every row set gives its connection back: after many
// reads, of which some fail, nothing is held.
func TestTheGuardReleasesEveryConnection(t *testing.T) {
	st := testdb.Open(t, store.WithPool(2, time.Second))
	ctx := tenant.Unrestricted(context.Background(), "test")
	for i := range 50 {
		if _, err := st.Client.Property.Query().All(ctx); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := st.Client.Property.Query().All(cancelled); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled read: got %v", err)
			}
		}
	}
	if p := st.Pool(); p.InUse != 0 {
		t.Errorf("pool after 55 reads: %+v, want nothing in use", p)
	}
}

func TestPostgresLockWaitsExhaustThePoolWithoutLookingDead(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL)")
	}
	url := testdb.URL(t)
	st, err := store.Open(context.Background(), url, store.WithPool(2, 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	locker, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	ctx := tenant.Unrestricted(context.Background(), "test")
	tx, err := locker.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE inventories IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	blocked, cancel := context.WithCancel(ctx)
	defer cancel()
	for range 2 {
		go func() { _, _ = st.Client.Inventory.Query().Count(blocked) }()
	}
	waitFor(t, func() bool { return st.Pool().InUse == 2 })
	_, err = st.Client.Property.Query().Count(ctx)
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Errorf("unrelated read behind locked-table waits: got %v, want UNAVAILABLE", err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Errorf("ping with a full pool: %v; the spare connection should answer it", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 10 s")
}

// What the database says when it cannot answer is an outage; a context that
// ended (the request's deadline, its client gone) is not, however wrapped:
// it would otherwise read as a net.Error timeout and become a 503.
func TestUnavailableTellsOutagesFromEndedContexts(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", context.DeadlineExceeded, false},
		{"wrapped deadline", fmt.Errorf("querying: %w", context.DeadlineExceeded), false},
		{"cancelled", context.Canceled, false},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", fmt.Errorf("reading: %w", syscall.ECONNRESET), true},
		{"a wrong statement", errors.New(`syntax error at or near "SELEC"`), false},
	} {
		if got := store.Unavailable(tt.err); got != tt.want {
			t.Errorf("Unavailable(%s: %v): got %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
