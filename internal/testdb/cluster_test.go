package testdb_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A cluster answers once started, refuses connections while stopped (as
// store.Unavailable errors), answers again on the same port after Start,
// keeps what was committed before a crash, and leaves no server and no
// files once its test ends. It runs in the PostgreSQL test run only, like
// every test that starts a cluster: the SQLite run stays lean.
func TestClusterStopsStartsAndCleansUp(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("starts a PostgreSQL cluster: runs when " + testdb.EnvURL + " is set")
	}
	var dataDir string
	var port int
	t.Run("cluster", func(t *testing.T) {
		c := testdb.StartCluster(t)
		dataDir, port = c.DataDir(), c.Port()
		if _, err := os.Stat(dataDir + "/PG_VERSION"); err != nil {
			t.Fatalf("DataDir: %v", err)
		}
		ctx := context.Background()
		st, err := store.Open(ctx, c.CreateDatabase("app"), store.WithConnectTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatalf("migrating on the cluster: %v", err)
		}

		began := time.Now()
		c.Stop()
		stopped := time.Since(began)
		if c.Running() {
			t.Error("Running after Stop")
		}
		if err := st.Ping(ctx); err == nil || !store.Unavailable(err) {
			t.Errorf("ping while stopped: %v, want an error store.Unavailable recognises", err)
		}
		c.Stop() // stopping twice does nothing

		began = time.Now()
		c.Start()
		t.Logf("Stop (-m fast) took %s, Start %s", stopped.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
		if c.Port() != port {
			t.Errorf("port %d after Start, was %d", c.Port(), port)
		}
		if err := st.Ping(ctx); err != nil {
			t.Errorf("ping after Start: %v", err)
		}
		c.Crash()
		c.Start()
		if applied, err := st.Migrate(ctx); err != nil || len(applied) != 0 {
			t.Errorf("after a crash and a start: migrations %v applied again (%v), want the schema kept", applied, err)
		}
	})
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data directory is still there after the test: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still answers after the test", port)
	}
}
