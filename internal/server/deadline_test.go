package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

var company = datagen.DemoCompanies[0].String()

// lockedInventories serves a small dataset with the given request timeout
// while another session holds the inventories table, so that every request
// that reads inventories waits on the lock. It returns the server and that
// other session's database, to look at PostgreSQL's activity with.
func lockedInventories(t *testing.T, timeout time.Duration) (*apitest.Server, *sql.DB) {
	t.Helper()
	if !testdb.Postgres() {
		t.Skip("shown on PostgreSQL (set TEST_DATABASE_URL): a lock held by another session")
	}
	url := testdb.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	size := datagen.Size{Companies: 1, PropertiesPerCompany: 2, InventoriesPerProperty: 1, MinEnvironments: 1, MaxEnvironments: 1, MinItems: 1, MaxItems: 1}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 3, size); err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), RequestTimeout: timeout})

	other, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	lock, err := other.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Rollback() })
	if _, err := lock.Exec(`LOCK TABLE inventories IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return srv, other
}

// waitingOnLocks counts the statements of this database that wait on a lock.
func waitingOnLocks(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// noneWaitSoon fails unless no statement waits on a lock within a few
// seconds: a cancel request takes a round trip to land.
func noneWaitSoon(t *testing.T, db *sql.DB) {
	t.Helper()
	for range 50 {
		if waitingOnLocks(t, db) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%d statements still wait on the lock: their requests ended, but PostgreSQL was not told to stop them", waitingOnLocks(t, db))
}

func TestABlockedRequestEndsAtItsDeadlineAndItsStatementIsCancelled(t *testing.T) {
	srv, other := lockedInventories(t, 300*time.Millisecond)

	// Not a speed claim: a request that waited for the lock would never end.
	answered := make(chan apitest.Response, 1)
	go func() {
		answered <- srv.GraphQL(t, company, `{ inventories(first: 1) { edges { node { id } } } }`, nil)
	}()
	select {
	case res := <-answered:
		if len(res.Errors) == 0 || res.Errors[0].Code() != "DEADLINE_EXCEEDED" {
			t.Errorf("GraphQL: got %s %+v, want DEADLINE_EXCEEDED", res.Data, res.Errors)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("GraphQL: no answer 20s after a 300ms deadline")
	}
	noneWaitSoon(t, other)

	r, body := srv.Get(t, "/api/v1/inventories?x-company-id="+company, nil)
	var rest struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal(body, &rest); err != nil || r.StatusCode != http.StatusGatewayTimeout || rest.Error.Code != "DEADLINE_EXCEEDED" {
		t.Errorf("REST: got %d %s, want 504 DEADLINE_EXCEEDED", r.StatusCode, body)
	}
	noneWaitSoon(t, other)
}

func TestAClientThatGoesAwayCancelsItsStatement(t *testing.T) {
	srv, other := lockedInventories(t, time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/inventories?x-company-id="+company, nil)
	done := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	for i := 0; waitingOnLocks(t, other) == 0; i++ {
		if i == 100 {
			t.Fatal("the request's statement never reached the lock")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel() // the client goes away, a minute before the request's deadline
	if err := <-done; err == nil {
		t.Fatal("the request was answered, want the client to have given up")
	}
	noneWaitSoon(t, other)
}

// TestARequestPastItsDeadlineLogsOneWarning: a request that runs out of its
// deadline (here waiting for the one database connection, which a
// transaction holds) is logged once at WARN by the server, with its id,
// method, path, status, elapsed time and the timeout, over GraphQL and REST
// alike. A request answered in time logs none, nor does one whose client
// went away before its deadline (that is not a timeout of the service's).
func TestARequestPastItsDeadlineLogsOneWarning(t *testing.T) {
	const timeout = 300 * time.Millisecond
	// The acquire timeout outlasts the deadline: the wait ends at the deadline.
	st := testdb.DemoRecords.Open(t, store.WithPool(1, time.Minute))
	var logs apitest.LogBuffer
	srv := apitest.NewServerLogging(t, st, server.Options{Files: apitest.Files(t), RequestTimeout: timeout}, logs.Logger(slog.LevelInfo))
	tx, err := st.Client.Tx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	requests := []struct {
		id, method, path string
		body             []byte
		status           int
	}{
		{"late-graphql", http.MethodPost, "/graphql", []byte(`{"query":"{ inventories(first: 1) { edges { node { id } } } }"}`), http.StatusOK},
		{"late-rest", http.MethodGet, "/api/v1/inventories", nil, http.StatusGatewayTimeout},
	}
	for _, r := range requests {
		status, _, body := request(t, r.method, srv.URL+r.path, http.Header{"X-Company-Id": {company}, "X-Request-Id": {r.id}}, r.body)
		if status != r.status || !strings.Contains(string(body), "DEADLINE_EXCEEDED") {
			t.Errorf("%s %s behind a held connection: %d %s, want %d DEADLINE_EXCEEDED", r.method, r.path, status, body, r.status)
		}
	}
	var warnings []map[string]any
	for _, line := range logs.Take(t) {
		if line["level"] == "WARN" {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != len(requests) {
		t.Fatalf("%d WARN lines for %d requests past their deadline: %v", len(warnings), len(requests), warnings)
	}
	for i, r := range requests {
		w := warnings[i]
		elapsed, _ := w["elapsed"].(float64)
		if w["msg"] != "request ran past its deadline" || w["request_id"] != r.id || w["method"] != r.method || w["path"] != r.path ||
			w["status"] != float64(r.status) || w["timeout"] != float64(timeout) || time.Duration(elapsed) < timeout {
			t.Errorf("WARN line of %s: %v, want its id, method, path, status, an elapsed time past %s and that timeout", r.id, w, timeout)
		}
	}

	// The client goes away before the deadline: no warning.
	long := apitest.NewServerLogging(t, st, server.Options{Files: apitest.Files(t), RequestTimeout: time.Minute}, logs.Logger(slog.LevelInfo))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, long.URL+"/api/v1/inventories?x-company-id="+company, nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Errorf("a request whose client left: answered %d, want the client's own timeout", res.StatusCode)
	}
	// In time: no warning.
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if status, _, body := request(t, http.MethodGet, srv.URL+"/api/v1/inventories?x-company-id="+company, nil, nil); status != http.StatusOK {
		t.Fatalf("with the connection free: %d %s", status, body)
	}
	time.Sleep(200 * time.Millisecond) // the abandoned request's handler returns once its context ends
	for _, line := range logs.Take(t) {
		if line["level"] == "WARN" {
			t.Errorf("a request answered in time, or left by its client, logged at WARN: %v", line)
		}
	}
}
