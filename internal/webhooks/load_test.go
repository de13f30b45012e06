package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/webhooks"
)

// The load: 10,000 events to 3 endpoints (30,000 deliveries),
// delivered within 30 s on PostgreSQL, on one instance. The events are
// written first, River idle, and the 30 s run from River's start to the
// last delivery received: the figure is the deliveries', not the writes'
// (BenchmarkCreateInventoryJobInsert is what a write pays), and on two
// cores writers running beside the workers would make it the sum of both.
// Run with INVENTORY_WEBHOOK_LOAD=on; it logs the figures.
func TestTenThousandEventsToThreeEndpoints(t *testing.T) {
	if os.Getenv("INVENTORY_WEBHOOK_LOAD") != "on" {
		t.Skip("set INVENTORY_WEBHOOK_LOAD=on (and TEST_DATABASE_URL for PostgreSQL)")
	}
	const events, endpoints = 10_000, 3
	st := testdb.DemoRecords.Open(t)
	svc, startWorking := serviceNotStarted(t, st)
	company := datagen.DemoCompanies[0]
	ctx := tenant.WithCompany(context.Background(), company)
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	for range endpoints {
		if _, _, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{"INVENTORY_UPDATED"}}); err != nil {
			t.Fatal(err)
		}
	}
	inv := unsigned(t, st, ctx)
	write, err := tenant.ForWriting(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range events / 100 {
		if err := records.InTx(write, st.Client, func(tx *ent.Tx) error {
			for range 100 {
				if err := records.Record(write, tx.Client(), records.Event{Kind: recordevent.KindInventoryUpdated, CompanyID: company,
					PropertyID: inv.PropertyID, InventoryID: inv.ID}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	written := time.Since(start)
	want := int64(events * endpoints)
	start = time.Now()
	startWorking()
	for deadline := start.Add(90 * time.Second); got.Load() < want && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	all := time.Since(start)
	t.Logf("%s: %d events written with their deliveries in %s (%.2f ms per event); %d of %d deliveries received %s after River started (%.0f/s)",
		st.Dialect(), events, written.Round(time.Millisecond), float64(written.Microseconds())/1000/events, got.Load(), want,
		all.Round(time.Millisecond), float64(got.Load())/all.Seconds())
	if got.Load() < want || (st.Dialect() == "postgres" && all > 30*time.Second) {
		t.Errorf("not every delivery within 30 s (the issue's figure on PostgreSQL)")
	}
}
