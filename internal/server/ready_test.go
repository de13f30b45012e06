package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// /readyz tells the three reasons not to send this instance traffic apart:
// a pool stuck with every connection held, shutting down, and a database
// that does not answer; a request behind a stuck pool is told to retry. A
// full pool whose waiters have not been refused is only loaded, and ready.
func TestReadinessTellsABusyPoolFromADeadDatabase(t *testing.T) {
	st := testdb.Open(t, store.WithPool(1, 2*time.Second))
	size := datagen.Size{Companies: 1, PropertiesPerCompany: 2, InventoriesPerProperty: 1, MinEnvironments: 1, MaxEnvironments: 1, MinItems: 1, MaxItems: 1}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 3, size); err != nil {
		t.Fatal(err)
	}
	drain := server.NewDrain()
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Drain: drain})
	ready := func(wantStatus int, want string) {
		t.Helper()
		res, body := srv.Get(t, "/readyz", nil)
		if res.StatusCode != wantStatus || !strings.Contains(string(body), want) {
			t.Errorf("/readyz: got %d %s, want %d %q", res.StatusCode, body, wantStatus, want)
		}
	}
	ready(http.StatusOK, `"ok"`)

	// The one connection is held (in production: by requests waiting on a
	// locked table); a request waits for it, then is told to retry.
	tx, err := st.Client.Tx(tenant.Unrestricted(context.Background(), "test"))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res  *http.Response
		body []byte
	}
	answered := make(chan answer, 1)
	go func() {
		res, body := srv.Get(t, "/api/v1/inventories?x-company-id="+company, nil)
		answered <- answer{res, body}
	}()
	for deadline := time.Now().Add(10 * time.Second); st.Pool().Waiting == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never waited for the held connection")
		}
	}
	ready(http.StatusOK, `"ok"`) // waiting, not yet refused: loaded, not stuck
	a := <-answered
	ready(http.StatusServiceUnavailable, "database busy")
	var refusal struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(a.body, &refusal)
	if a.res.StatusCode != http.StatusServiceUnavailable || refusal.Error.Code != "UNAVAILABLE" {
		t.Errorf("B1 behind a full pool: got %d %s, want 503 UNAVAILABLE", a.res.StatusCode, a.body)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	ready(http.StatusOK, `"ok"`)

	drain.Start()
	ready(http.StatusServiceUnavailable, "shutting down")
}

func TestReadinessReportsAnUnreachableDatabase(t *testing.T) {
	st := testdb.Open(t)
	srv := apitest.NewServer(t, st, nil)
	st.Close()
	res, body := srv.Get(t, "/readyz", nil)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "database unreachable") {
		t.Errorf("/readyz with the database closed: got %d %s", res.StatusCode, body)
	}
}
