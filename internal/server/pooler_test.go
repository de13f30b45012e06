package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// pooledInstance is a server whose database URL goes through PgBouncer in
// transaction mode, as docs/deployment.md lays it out, its live updates'
// LISTEN on listen (the pooled URL's own configuration when nil).
func pooledInstance(t *testing.T, pooled string, listen *pgx.ConnConfig, logs *apitest.LogBuffer) *instance {
	t.Helper()
	st, err := store.Open(context.Background(), pooled)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if listen == nil {
		listen = st.PrimaryConfig()
	}
	hub := live.New(st.Client, st.Dialect(), listen, logs.Logger(slog.LevelInfo), live.Options{Poll: 20 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	return &instance{srv: apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Live: server.LiveOptions{Hub: hub}}), st: st, hub: hub}
}

// TestLiveUpdatesBehindATransactionPooler: through PgBouncer in transaction
// mode a LISTEN hears nothing (the pooler gives its server connection to
// others), so subscribers heard nothing, and nothing said so. Now each
// instance checks that its LISTEN hears its own NOTIFY; when it does not, it
// follows the events by polling, says so once at WARN, in /readyz and in a
// metric, and two such instances receive each other's writes. With
// INVENTORY_DATABASE_LISTEN_URL, a direct connection, it listens.
func TestLiveUpdatesBehindATransactionPooler(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("runs in the PostgreSQL run (TEST_DATABASE_URL): it starts a PostgreSQL and a PgBouncer of its own")
	}
	cluster := testdb.StartCluster(t)
	pooled := testdb.StartPgBouncer(t, cluster) + "&default_query_exec_mode=exec"
	direct := testdb.OpenURL(t, cluster.URL())
	if _, err := datagen.Load(context.Background(), direct.Client, nil, datagen.DemoSeed, smallDataset); err != nil {
		t.Fatal(err)
	}
	var logsOne, logsTwo, logsThree apitest.LogBuffer
	one, two := pooledInstance(t, pooled, nil, &logsOne), pooledInstance(t, pooled, nil, &logsTwo)
	listen, err := store.ListenConfig(cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	three := pooledInstance(t, pooled, listen, &logsThree)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) &&
		(one.hub.Mode() != live.ModePolling || two.hub.Mode() != live.ModePolling); time.Sleep(50 * time.Millisecond) {
	}
	for name, i := range map[string]*instance{"one": one, "two": two} {
		if i.hub.Mode() != live.ModePolling {
			t.Errorf("instance %s behind the pooler: mode %s, want %s", name, i.hub.Mode(), live.ModePolling)
		}
		_, body := i.srv.Get(t, "/readyz", nil)
		if !strings.Contains(string(body), "live updates by polling") || !strings.Contains(string(body), "INVENTORY_DATABASE_LISTEN_URL") {
			t.Errorf("instance %s's /readyz: %s; want it to say it polls, and what to set", name, body)
		}
	}
	for name, logs := range map[string]*apitest.LogBuffer{"one": &logsOne, "two": &logsTwo} {
		if n := strings.Count(logs.String(), "LISTEN does not hear this instance's own NOTIFY"); n != 1 {
			t.Errorf("instance %s: %d warnings that LISTEN hears nothing, want 1:\n%s", name, n, logs.String())
		}
	}
	if three.hub.Mode() != live.ModeListen || strings.Contains(logsThree.String(), "LISTEN does not hear") {
		t.Errorf("the instance listening on a direct URL: mode %s; want %s, and no warning:\n%s", three.hub.Mode(), live.ModeListen, logsThree.String())
	}

	// Each instance's subscribers hear the other's writes.
	prop := aPropertyOf(t, direct, datagen.DemoCompanies[0])
	for _, pair := range []struct {
		name     string
		from, to *instance
	}{{"one to two", one, two}, {"two to one", two, one}, {"one to the listening three", one, three}} {
		c, err := dialLive(t, pair.to.srv.URL, map[string]any{tenant.Header: company})
		if err != nil {
			t.Fatal(err)
		}
		c.subscribe("1", eventsSubscription, map[string]any{"property": prop})
		time.Sleep(100 * time.Millisecond) // the subscription is registered
		id := createOn(t, pair.from.srv, prop)
		// A poll may hand over an earlier write that committed before the
		// subscription but after the Hub last read.
		ev, err := c.event("1", 10*time.Second)
		for err == nil && ev.InventoryID != id {
			ev, err = c.event("1", 10*time.Second)
		}
		if err != nil {
			t.Errorf("%s: %v; want the creation of %s", pair.name, err, id)
		}
	}
	if status, _, _ := request(t, http.MethodGet, one.srv.URL+"/readyz", nil, nil); status != http.StatusOK {
		t.Errorf("/readyz of a polling instance: %d, want 200: it serves", status)
	}
}
