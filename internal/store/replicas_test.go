package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// transactions is how many transactions a server has counted in its
// postgres database: on a standby, the reads it served.
func transactions(t *testing.T, url string) int64 {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// With two streaming standbys, reads go to them, spread within 20% of each
// other, and none to the primary; with the primary stopped, reads are still
// answered and writes are refused as unavailable, until it is back.
// Runs in the PostgreSQL test run: it starts a primary and two standbys.
func TestReadsGoToTheStandbysAndOutliveThePrimary(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("starts PostgreSQL clusters: runs when " + testdb.EnvURL + " is set")
	}
	primary := testdb.StartCluster(t)
	company := uuid.New()
	write := tenant.Unrestricted(context.Background(), "test: fixtures")
	{
		st, err := store.Open(context.Background(), primary.URL())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Client.Property.Create().SetCompanyID(company).SetAddress("Calle 1").SetCity("Cali").SetPropertyType("Casa").Save(write); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	one, two := testdb.StartReplica(t, primary), testdb.StartReplica(t, primary)
	st, err := store.Open(context.Background(), primary.URL(), store.WithReplicas([]string{one.URL(), two.URL()}, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := st.Replicas()
		if len(r) == 2 && r[0].Healthy && r[1].Healthy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standbys never came into rotation: %+v", r)
		}
	}

	// Their state is on /metrics, a series per standby.
	instruments := metrics.New()
	instruments.WatchReplicas(st.ReplicaMetrics)
	scrape := httptest.NewServer(instruments.Handler())
	defer scrape.Close()
	res, err := http.Get(scrape.URL)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if f := families["inventory_db_replica_healthy"]; f == nil || len(f.Metric) != 2 || f.Metric[0].Gauge.GetValue() != 1 || f.Metric[1].Gauge.GetValue() != 1 ||
		families["inventory_db_replica_lag_seconds"] == nil {
		t.Errorf("/metrics: %v, want both standbys healthy, and their lag", families["inventory_db_replica_healthy"])
	}

	read := tenant.WithCompany(context.Background(), company)
	before := []int64{transactions(t, primary.URL()), transactions(t, one.URL()), transactions(t, two.URL())}
	const reads = 300
	for range reads {
		if n, err := st.Client.Property.Query().Count(read); err != nil || n != 1 {
			t.Fatalf("a read: %d, %v", n, err)
		}
	}
	// Each server's counts reach pg_stat_database when its sessions report
	// them (within seconds when idle).
	var served []int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		served = []int64{transactions(t, primary.URL()) - before[0], transactions(t, one.URL()) - before[1], transactions(t, two.URL()) - before[2]}
		if served[1]+served[2] >= reads || time.Now().After(deadline) {
			break
		}
	}
	if served[1]+served[2] < reads || served[0] > reads/20 {
		t.Fatalf("transactions counted: primary %d, standbys %d and %d: want the %d reads on the standbys", served[0], served[1], served[2], reads)
	}
	if lo, hi := min(served[1], served[2]), max(served[1], served[2]); float64(hi-lo) > 0.2*float64(hi) {
		t.Errorf("standbys served %d and %d reads: want them within 20%% of each other", served[1], served[2])
	}

	primary.Stop()
	if n, err := st.Client.Property.Query().Count(read); err != nil || n != 1 {
		t.Errorf("a read with the primary down: %d, %v", n, err)
	}
	// Served: the instance stays ready for reads, and answers them.
	srv := apitest.NewServer(t, st, nil)
	if res, body := srv.Get(t, "/readyz", nil); res.StatusCode != http.StatusOK || !strings.Contains(string(body), "reads only") ||
		strings.Count(string(body), `"healthy":true`) != 2 {
		t.Errorf("/readyz with the primary down: %d %s, want 200 for reads only, naming both standbys healthy", res.StatusCode, body)
	}
	var page struct{ Properties struct{ TotalCount int } }
	srv.MustData(t, company.String(), `{ properties(first: 5) { totalCount } }`, nil, &page)
	if page.Properties.TotalCount != 1 {
		t.Errorf("GraphQL with the primary down: %d properties, want 1", page.Properties.TotalCount)
	}
	_, err = st.Client.Property.Create().SetCompanyID(company).SetAddress("Calle 2").SetCity("Cali").SetPropertyType("Casa").Save(write)
	if !store.Unavailable(err) {
		t.Errorf("a write with the primary down: %v, want the database unavailable", err)
	}
	primary.Start()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err = st.Client.Property.Create().SetCompanyID(company).SetAddress("Calle 2").SetCity("Cali").SetPropertyType("Casa").Save(write)
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Errorf("a write once the primary is back: %v", err)
	}
}

// Behind PgBouncer in transaction pooling mode, with pgx told to send no
// named prepared statements (default_query_exec_mode=exec in the URL, as
// the README says), the service answers the nested query: many statements
// of one request land on different server connections.
func TestTheServiceWorksBehindPgBouncerInTransactionMode(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("starts a PostgreSQL cluster: runs when " + testdb.EnvURL + " is set")
	}
	cluster := testdb.StartCluster(t)
	direct, err := store.Open(context.Background(), cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := datagen.Load(context.Background(), direct.Client, nil, datagen.DemoSeed, datagen.Size{Companies: 1, PropertiesPerCompany: 5,
		InventoriesPerProperty: 2, MinEnvironments: 2, MaxEnvironments: 3, MinItems: 2, MaxItems: 4, MaxPhotos: 1}); err != nil {
		t.Fatal(err)
	}
	direct.Close()

	pooled, err := store.Open(context.Background(), testdb.StartPgBouncer(t, cluster)+"&default_query_exec_mode=exec")
	if err != nil {
		t.Fatal(err)
	}
	defer pooled.Close()
	srv := apitest.NewServer(t, pooled, nil)
	// Concurrent requests: each one's statements land on whichever server
	// connection PgBouncer has free, never the same one twice for sure.
	var wg sync.WaitGroup
	failures := make(chan string, 80)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				res := srv.GraphQL(t, datagen.DemoCompanies[0].String(), ide.ExampleQuery, nil)
				if len(res.Errors) > 0 || !strings.Contains(string(res.Data), `"items"`) {
					failures <- fmt.Sprintf("%v %.200s", res.Errors, res.Data)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("the nested query through PgBouncer: %s", f)
	}
}
