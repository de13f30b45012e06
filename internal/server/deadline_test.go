package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
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
	go func() { answered <- srv.GraphQL(t, company, `{ inventories(first: 1) { totalCount } }`, nil) }()
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
