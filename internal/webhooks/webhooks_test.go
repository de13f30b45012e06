package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/ent/webhookdelivery"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/webhooks"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// verify checks a delivery as a receiver does, with the Standard Webhooks
// reference library (github.com/standard-webhooks/standard-webhooks/libraries),
// apart from the service's code: a v1 signature in webhook-signature that
// is the HMAC-SHA256 of "webhook-id.webhook-timestamp.body" under the
// secret, and a timestamp within five minutes.
func verify(secret string, h http.Header, body []byte) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	return wh.Verify(body, h)
}

// received is one delivery a receiver took.
type received struct {
	id      string
	payload webhooks.Payload
	err     error // its verification
}

// receiver is a real HTTP receiver that verifies each delivery with
// secret (set once the endpoint is made) and answers as answer says.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	got    []received
	answer func(n int) int // the status of the n-th request, from 1
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	r := &receiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		rc := received{id: req.Header.Get("webhook-id"), err: verify(r.secret, req.Header, body)}
		if rc.err == nil && !verifyWebhook(r.secret, req.Header, body) {
			rc.err = errors.New("the README's receiver refused a delivery the specification's check took")
		}
		if err := json.Unmarshal(body, &rc.payload); err != nil && rc.err == nil {
			rc.err = err
		}
		r.got = append(r.got, rc)
		status := http.StatusOK
		if r.answer != nil {
			status = r.answer(len(r.got))
		}
		r.mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor polls until cond holds, or fails after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %s for %s", d, what)
		}
	}
}

// keepNothing stands for the signed PDF's maker: the signatures' PDF jobs
// complete at once.
type keepNothing struct{}

func (keepNothing) Keep(context.Context, uuid.UUID) error { return nil }

// service is the webhooks of st, with River working their jobs on st's
// database, retrying after a few milliseconds, and receivers on loopback
// allowed.
func service(t *testing.T, st *store.Store) *webhooks.Service {
	t.Helper()
	svc, start := serviceNotStarted(t, st)
	start()
	return svc
}

// serviceNotStarted is service whose River starts working when start is
// called: the jobs inserted before wait for it.
func serviceNotStarted(t *testing.T, st *store.Store) (svc *webhooks.Service, start func()) {
	t.Helper()
	ctx := context.Background()
	j, err := jobs.New(ctx, st, jobs.Options{Work: true, PollInterval: 100 * time.Millisecond, WebhookRetryBase: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc = webhooks.New(st.Client, j, webhooks.Options{AllowPrivate: true})
	svc.EnqueueOn(st.Client)
	j.DeliverWebhooksWith(svc)
	j.MakeSignedPDFsWith(keepNothing{})
	started := false
	t.Cleanup(func() {
		if !started {
			return
		}
		stop, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := j.Stop(stop); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return svc, func() {
		t.Helper()
		if err := j.Start(ctx); err != nil {
			t.Fatal(err)
		}
		started = true
	}
}

var allKinds = []webhooks.Kind{"INVENTORY_CREATED", "INVENTORY_UPDATED", "PHOTO_ADDED", "PHOTO_REMOVED", "AGENT_SIGNED",
	"OWNER_SIGNED", "TENANT_SIGNED", "FULLY_SIGNED", "PDF_READY", "INVENTORY_CORRECTED", "SIGNATURE_REQUESTED"}

// unsigned is an inventory of company nobody has signed.
func unsigned(t *testing.T, st *store.Store, ctx context.Context) *ent.Inventory {
	t.Helper()
	inv, err := st.Client.Inventory.Query().Where(inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(),
		inventory.OwnerSignatureDateIsNil(), inventory.TenantSignatureDateIsNil()).Order(ent.Asc(inventory.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// signAll signs inv for each required party.
func signAll(t *testing.T, st *store.Store, ctx context.Context, inv *ent.Inventory) {
	t.Helper()
	svc := records.NewService(st.Client, st, slog.New(slog.DiscardHandler), nil, nil, false)
	for _, p := range records.RequiredSignatures(inv) {
		if _, err := svc.Sign(ctx, records.Signing{InventoryID: inv.ID, Party: p, SignerName: "Ana Gómez"}); err != nil {
			t.Fatal(err)
		}
	}
}

// Every record event of a kind an endpoint subscribes to reaches it once,
// signed with its secret, its payload naming the event (cursor, kind,
// ids, version) and the inventory as the write left it.
func TestEveryEventIsDeliveredSignedToItsEndpoint(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	ep, secret, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL + "/hook", Events: allKinds, Description: "legacy PMS"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	inv := unsigned(t, st, ctx)
	signAll(t, st, ctx, inv)
	events, err := st.Client.RecordEvent.Query().Where(recordevent.InventoryID(inv.ID), recordevent.AtGTE(ep.CreatedAt)).
		Order(ent.Asc(recordevent.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 2 {
		t.Fatalf("events of the signatures: %d", len(events))
	}
	waitFor(t, 20*time.Second, "a delivery per event", func() bool { return len(rcv.deliveries()) >= len(events) })
	time.Sleep(200 * time.Millisecond) // no second copy follows
	got := rcv.deliveries()
	if len(got) != len(events) {
		t.Fatalf("deliveries: %d; want %d, one per event", len(got), len(events))
	}
	byCursor := map[string]received{}
	for _, r := range got {
		if r.err != nil {
			t.Errorf("delivery %s: %v", r.id, r.err)
		}
		byCursor[r.payload.Data.Cursor] = r
	}
	for _, ev := range events {
		r, ok := byCursor[strconv.FormatInt(ev.ID, 10)]
		if !ok {
			t.Errorf("event %d (%s): no delivery", ev.ID, ev.Kind)
			continue
		}
		kind, _ := webhooks.KindOf(ev.Kind)
		d := r.payload.Data
		if r.payload.Type != kind.Type() || d.Kind != kind || d.InventoryID != inv.ID || d.PropertyID != inv.PropertyID ||
			d.Inventory == nil || d.Inventory.ID != inv.ID {
			t.Errorf("event %d (%s): payload %+v", ev.ID, ev.Kind, r.payload)
		}
		if ev.Version != nil && (d.Version == nil || *d.Version != *ev.Version || d.Inventory.Version != *ev.Version) {
			t.Errorf("event %d: version %v, inventory's %d; want %d", ev.ID, d.Version, d.Inventory.Version, *ev.Version)
		}
	}
	page, err := svc.Deliveries(ctx, ep.ID, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Deliveries) != len(events) {
		t.Fatalf("webhookDeliveries: %d; want %d", len(page.Deliveries), len(events))
	}
	for _, d := range page.Deliveries {
		if d.Status != webhookdelivery.StatusDelivered || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 200 ||
			d.Attempts[0].Response != "answer 200" {
			t.Errorf("delivery %s: %s, attempts %+v", d.ID, d.Status, d.Attempts)
		}
	}
}

// A receiver that answers 500 twice, then 200, gets three attempts of the
// delivery under one webhook-id, each signed; the delivery keeps them.
func TestAFailedDeliveryIsRetriedUnderItsWebhookID(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	ep, secret, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	signAll(t, st, ctx, unsigned(t, st, ctx))
	waitFor(t, 20*time.Second, "three attempts", func() bool { return len(rcv.deliveries()) >= 3 })
	var d *ent.WebhookDelivery
	waitFor(t, 10*time.Second, "the delivery delivered", func() bool {
		page, err := svc.Deliveries(ctx, ep.ID, nil, 0, nil)
		if err != nil || len(page.Deliveries) != 1 {
			return false
		}
		d = page.Deliveries[0]
		return d.Status == webhookdelivery.StatusDelivered
	})
	got := rcv.deliveries()
	if len(got) != 3 {
		t.Fatalf("attempts received: %d; want 3", len(got))
	}
	for _, r := range got {
		if r.id != d.ID.String() || r.err != nil {
			t.Errorf("attempt: webhook-id %s (want %s), %v", r.id, d.ID, r.err)
		}
	}
	if len(d.Attempts) != 3 || d.Attempts[0].StatusCode != 500 || d.Attempts[1].StatusCode != 500 || d.Attempts[2].StatusCode != 200 {
		t.Errorf("attempts kept: %+v", d.Attempts)
	}
}

// A 410 Gone turns the endpoint off: the delivery fails, and the events
// after it make none.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, func(int) int { return http.StatusGone })
	ep, _, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{"AGENT_SIGNED", "OWNER_SIGNED", "TENANT_SIGNED", "FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	inv := unsigned(t, st, ctx)
	parties := records.RequiredSignatures(inv)
	rs := records.NewService(st.Client, st, slog.New(slog.DiscardHandler), nil, nil, false)
	if _, err := rs.Sign(ctx, records.Signing{InventoryID: inv.ID, Party: parties[0], SignerName: "Ana"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the endpoint turned off", func() bool {
		eps, err := svc.Endpoints(ctx)
		return err == nil && len(eps) == 1 && !eps[0].Enabled && eps[0].DisabledReason != nil
	})
	for _, p := range parties[1:] {
		if _, err := rs.Sign(ctx, records.Signing{InventoryID: inv.ID, Party: p, SignerName: "Ana"}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := svc.Deliveries(ctx, ep.ID, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Deliveries) != 1 || page.Deliveries[0].Status != webhookdelivery.StatusFailed {
		t.Fatalf("deliveries after the 410: %d", len(page.Deliveries))
	}
	if n := len(rcv.deliveries()); n != 1 {
		t.Errorf("requests: %d; want 1", n)
	}
}

// One company never sees, changes or is sent another's endpoints, and a
// company has at most MaxEndpoints of them.
func TestEndpointsAreTheirCompanys(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := webhooks.New(st.Client, nil, webhooks.Options{MaxEndpoints: 2})
	a := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	b := tenant.WithCompany(context.Background(), datagen.DemoCompanies[1])
	ep, _, err := svc.Create(a, webhooks.NewEndpoint{URL: "https://receiver.example/a", Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	if eps, err := svc.Endpoints(b); err != nil || len(eps) != 0 {
		t.Fatalf("b's endpoints: %d, %v; want none", len(eps), err)
	}
	off := false
	notFound := func(what string, err error) {
		if e, ok := errors.AsType[*apperr.Error](err); !ok || e.Code != apperr.NotFound {
			t.Errorf("%s of a's endpoint as b: %v; want NOT_FOUND", what, err)
		}
	}
	_, err = svc.Update(b, webhooks.Change{ID: ep.ID, Enabled: &off})
	notFound("update", err)
	_, _, err = svc.Rotate(b, ep.ID)
	notFound("rotate", err)
	if deleted, err := svc.Delete(b, ep.ID); deleted || err != nil {
		t.Errorf("delete of a's endpoint as b: %v, %v; want false", deleted, err)
	}
	if page, err := svc.Deliveries(b, ep.ID, nil, 0, nil); err != nil || len(page.Deliveries) != 0 {
		t.Errorf("b's deliveries of a's endpoint: %v", err)
	}
	if eps, err := svc.Endpoints(a); err != nil || len(eps) != 1 || !eps[0].Enabled {
		t.Fatalf("a's endpoints after b's tries: %v", err)
	}
	if _, _, err := svc.Create(a, webhooks.NewEndpoint{URL: "https://receiver.example/a2", Events: []webhooks.Kind{"FULLY_SIGNED"}}); err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.Create(a, webhooks.NewEndpoint{URL: "https://receiver.example/a3", Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if e, ok := errors.AsType[*apperr.Error](err); !ok || e.Code != apperr.Conflict {
		t.Errorf("a third endpoint past the bound of 2: %v; want CONFLICT", err)
	}
	if _, _, err := svc.Create(b, webhooks.NewEndpoint{URL: "https://receiver.example/b", Events: []webhooks.Kind{"FULLY_SIGNED"}}); err != nil {
		t.Errorf("b's first endpoint: %v", err)
	}
}

// Another company's events are never delivered to an endpoint.
func TestAnotherCompanysEventsAreNotDelivered(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	a := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	b := tenant.WithCompany(context.Background(), datagen.DemoCompanies[1])
	rcv := newReceiver(t, nil)
	if _, _, err := svc.Create(a, webhooks.NewEndpoint{URL: rcv.URL, Events: allKinds}); err != nil {
		t.Fatal(err)
	}
	signAll(t, st, b, unsigned(t, st, b))
	time.Sleep(500 * time.Millisecond)
	if n := len(rcv.deliveries()); n != 0 {
		t.Errorf("a's receiver got %d of b's events", n)
	}
}

// A rotation's two secrets sign each delivery while the old one lasts.
func TestARotatedSecretSignsBesideTheNew(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	ep, old, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	rotated, fresh, err := svc.Rotate(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == old || rotated.PreviousSecretExpiresAt == nil || time.Until(*rotated.PreviousSecretExpiresAt) < 23*time.Hour {
		t.Fatalf("rotation: new secret %v, old until %v", fresh != old, rotated.PreviousSecretExpiresAt)
	}
	rcv.mu.Lock()
	rcv.secret = old // a receiver that has not taken the new secret yet
	rcv.mu.Unlock()
	signAll(t, st, ctx, unsigned(t, st, ctx))
	waitFor(t, 20*time.Second, "the delivery", func() bool { return len(rcv.deliveries()) == 1 })
	if err := rcv.deliveries()[0].err; err != nil {
		t.Errorf("verified with the old secret: %v", err)
	}
}

// A delivery made while no instance works the jobs (down, or started
// with INVENTORY_JOBS=off) is in the database with its job: the first
// instance that works them sends it.
func TestADeliveryWaitsInTheDatabaseForAWorker(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	idle, err := jobs.New(context.Background(), st, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writer := webhooks.New(st.Client, idle, webhooks.Options{AllowPrivate: true})
	writer.EnqueueOn(st.Client)
	rcv := newReceiver(t, nil)
	_, secret, err := writer.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	signAll(t, st, ctx, unsigned(t, st, ctx))
	if err := idle.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.deliveries()); n != 0 {
		t.Fatalf("delivered with no worker: %d", n)
	}
	j, err := jobs.New(context.Background(), st, jobs.Options{Work: true, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	j.DeliverWebhooksWith(webhooks.New(st.Client, j, webhooks.Options{AllowPrivate: true}))
	j.MakeSignedPDFsWith(keepNothing{})
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer j.Stop(context.Background())
	waitFor(t, 20*time.Second, "the delivery", func() bool { return len(rcv.deliveries()) == 1 })
	if err := rcv.deliveries()[0].err; err != nil {
		t.Error(err)
	}
}

// A receiver on a refused address is never connected to: each attempt is
// kept with the refusal, and the delivery stays pending for its retries.
// redeliverWebhook sends a delivery again under its webhook-id.
func TestRefusedAttemptsAreKeptAndRedeliverySendsAgain(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	j, err := jobs.New(context.Background(), st, jobs.Options{Work: true, PollInterval: 100 * time.Millisecond, WebhookRetryBase: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	strict := webhooks.New(st.Client, j, webhooks.Options{}) // loopback refused
	strict.EnqueueOn(st.Client)
	j.DeliverWebhooksWith(strict)
	j.MakeSignedPDFsWith(keepNothing{})
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer j.Stop(context.Background())
	rcv := newReceiver(t, nil)
	// Made through a service that allows http, as a server did before
	// the setting changed; a name that resolves to loopback.
	lenient := webhooks.New(st.Client, j, webhooks.Options{AllowPrivate: true})
	ep, _, err := lenient.Create(ctx, webhooks.NewEndpoint{URL: strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1), Events: []webhooks.Kind{"FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	signAll(t, st, ctx, unsigned(t, st, ctx))
	var d *ent.WebhookDelivery
	waitFor(t, 20*time.Second, "a refused attempt", func() bool {
		page, err := strict.Deliveries(ctx, ep.ID, nil, 0, nil)
		if err != nil || len(page.Deliveries) != 1 || len(page.Deliveries[0].Attempts) == 0 {
			return false
		}
		d = page.Deliveries[0]
		return true
	})
	if a := d.Attempts[0]; a.StatusCode != 0 || !strings.Contains(a.Error, "loopback") || d.Status != webhookdelivery.StatusPending {
		t.Errorf("refused attempt: %+v, status %s", a, d.Status)
	}
	if n := len(rcv.deliveries()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
	again, err := lenient.Redeliver(ctx, d.ID)
	if err != nil || again.ID != d.ID {
		t.Fatalf("redeliver: %v", err)
	}
	// The redelivery's own job makes a second attempt at once (the first
	// job's retry is an hour away).
	waitFor(t, 20*time.Second, "the redelivery's attempt", func() bool {
		page, err := strict.Deliveries(ctx, ep.ID, nil, 0, nil)
		return err == nil && len(page.Deliveries) == 1 && len(page.Deliveries[0].Attempts) == 2
	})
}

// The repair list's changes reach the endpoints subscribed to them, one
// delivery per item, as repairEvents tells them: the move-out signed
// after the move-in flags its two items to repair.
func TestRepairChangesAreDeliveredPerItem(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	_, secret, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: []webhooks.Kind{webhooks.RepairFlagged, webhooks.RepairRepaired}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	moveIn, moveOut, property := apitest.ComparisonFixture(t, st.Client, datagen.DemoCompanies[0])
	for _, id := range []uuid.UUID{moveIn, moveOut} {
		inv, err := st.Client.Inventory.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		signAll(t, st, ctx, inv)
	}
	waitFor(t, 20*time.Second, "two repair deliveries", func() bool { return len(rcv.deliveries()) >= 2 })
	time.Sleep(200 * time.Millisecond)
	got := rcv.deliveries()
	if len(got) != 2 {
		t.Fatalf("repair deliveries: %d; want 2", len(got))
	}
	items := map[uuid.UUID]bool{}
	for _, r := range got {
		d := r.payload.Data
		if r.err != nil || r.payload.Type != "repair.flagged" || d.Kind != webhooks.RepairFlagged || d.InventoryID != moveOut ||
			d.PropertyID != property || d.ItemID == nil || d.City == nil {
			t.Errorf("repair delivery: %+v, %v", r.payload, r.err)
			continue
		}
		items[*d.ItemID] = true
	}
	if len(items) != 2 {
		t.Errorf("items flagged: %v; want two", items)
	}
}

// An endpoint is sent at most MaxInFlightPerEndpoint deliveries at once
// by an instance: a slow receiver holds that many of the queue's workers;
// the others wait without spending an attempt, and all arrive.
func TestASlowReceiverHoldsOnlyItsPlacesInFlight(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	ctx := context.Background()
	j, err := jobs.New(ctx, st, jobs.Options{Work: true, PollInterval: 100 * time.Millisecond, WebhookRetryBase: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc := webhooks.New(st.Client, j, webhooks.Options{AllowPrivate: true, MaxInFlightPerEndpoint: 1})
	svc.EnqueueOn(st.Client)
	j.DeliverWebhooksWith(svc)
	j.MakeSignedPDFsWith(keepNothing{})
	if err := j.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer j.Stop(ctx)
	var mu sync.Mutex
	now, most := 0, 0
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		now++
		most = max(most, now)
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		now--
		mu.Unlock()
	}))
	defer slow.Close()
	a := tenant.WithCompany(ctx, datagen.DemoCompanies[0])
	ep, _, err := svc.Create(a, webhooks.NewEndpoint{URL: slow.URL, Events: allKinds})
	if err != nil {
		t.Fatal(err)
	}
	signAll(t, st, a, unsigned(t, st, a))
	var page *webhooks.DeliveryPage
	waitFor(t, 30*time.Second, "every delivery", func() bool {
		page, err = svc.Deliveries(a, ep.ID, nil, 0, nil)
		if err != nil || len(page.Deliveries) < 2 {
			return false
		}
		for _, d := range page.Deliveries {
			if d.Status != webhookdelivery.StatusDelivered {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("deliveries in flight at once: %d; want 1", most)
	}
	for _, d := range page.Deliveries {
		if len(d.Attempts) != 1 {
			t.Errorf("delivery %s: %d attempts; want 1 (waiting spends none)", d.ID, len(d.Attempts))
		}
	}
}

// Two instances on one database (two stores, two River clients) work
// the same deliveries' jobs: each delivery is sent by one of them, once
// (its receiver answering 200).
func TestTwoInstancesSendEachDeliveryOnce(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one, two := testdb.OpenURL(t, url), testdb.OpenURL(t, url)
	first, _ := service(t, one), service(t, two)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	_, secret, err := first.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL, Events: allKinds})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	invs, err := one.Client.Inventory.Query().Where(inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(),
		inventory.OwnerSignatureDateIsNil(), inventory.TenantSignatureDateIsNil()).Order(ent.Asc(inventory.FieldID)).Limit(4).All(ctx)
	if err != nil || len(invs) < 2 {
		t.Fatalf("unsigned inventories: %d, %v", len(invs), err)
	}
	for i, inv := range invs { // the writes on both instances, as behind a balancer
		signAll(t, []*store.Store{one, two}[i%2], ctx, inv)
	}
	var want int
	waitFor(t, 30*time.Second, "every delivery", func() bool {
		n, err := one.Client.WebhookDelivery.Query().Count(ctx)
		want = n
		return err == nil && n > 0 && len(rcv.deliveries()) >= n
	})
	time.Sleep(300 * time.Millisecond)
	seen := map[string]int{}
	for _, r := range rcv.deliveries() {
		if r.err != nil {
			t.Error(r.err)
		}
		seen[r.id]++
	}
	if len(seen) != want {
		t.Errorf("deliveries received: %d; want %d", len(seen), want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s sent %d times; want once", id, n)
		}
	}
}

// A company whose receivers are all slow holds at most
// DefaultMaxInFlightPerCompany of an instance's delivery workers, though
// its three endpoints together could take more than all of them (3 × 8 >
// 20): another company's deliveries go out while the slow ones still
// hang, not after them.
func TestASlowCompanyNeverDelaysAnothersDeliveries(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	slowCompany := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	promptCompany := tenant.WithCompany(context.Background(), datagen.DemoCompanies[1])

	var mu sync.Mutex
	hanging, most, hangingWhenPromptArrived := 0, 0, -1
	promptArrived := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		hanging++
		most = max(most, hanging)
		mu.Unlock()
		select { // hangs until the other company was served (or nearly the delivery's 10 s)
		case <-promptArrived:
		case <-time.After(9 * time.Second):
		}
		mu.Lock()
		hanging--
		mu.Unlock()
	}))
	defer slow.Close()
	var once sync.Once
	prompt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if hangingWhenPromptArrived < 0 {
			hangingWhenPromptArrived = hanging
		}
		mu.Unlock()
		once.Do(func() { close(promptArrived) })
	}))
	defer prompt.Close()

	for range 3 {
		if _, _, err := svc.Create(slowCompany, webhooks.NewEndpoint{URL: slow.URL, Events: allKinds}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := svc.Create(promptCompany, webhooks.NewEndpoint{URL: prompt.URL, Events: allKinds}); err != nil {
		t.Fatal(err)
	}
	invs, err := st.Client.Inventory.Query().Where(inventory.IsSigned(false), inventory.AgentSignatureDateIsNil(),
		inventory.OwnerSignatureDateIsNil(), inventory.TenantSignatureDateIsNil()).Order(ent.Asc(inventory.FieldID)).Limit(3).All(slowCompany)
	if err != nil || len(invs) < 3 {
		t.Fatalf("unsigned inventories: %d, %v", len(invs), err)
	}
	for _, inv := range invs {
		signAll(t, st, slowCompany, inv)
	}
	waitFor(t, 20*time.Second, "the slow company's receivers to hold their most", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hanging >= webhooks.DefaultMaxInFlightPerCompany
	})
	signAll(t, st, promptCompany, unsigned(t, st, promptCompany))
	select {
	case <-promptArrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the other company's delivery did not arrive")
	}
	mu.Lock()
	defer mu.Unlock()
	if hangingWhenPromptArrived < webhooks.DefaultMaxInFlightPerCompany {
		t.Errorf("slow deliveries hanging when the other company's arrived: %d; want %d (it waited for them)",
			hangingWhenPromptArrived, webhooks.DefaultMaxInFlightPerCompany)
	}
	if most > webhooks.DefaultMaxInFlightPerCompany {
		t.Errorf("the slow company's deliveries in flight at once: %d; want at most %d", most, webhooks.DefaultMaxInFlightPerCompany)
	}
}

// A company's bound of endpoints holds when its creations come at once:
// eight creations one short of the bound make one endpoint, and the other
// seven are told the bound (on PostgreSQL they wait for one another's
// transactions; on SQLite one writes at a time).
func TestEndpointsCreatedAtOnceKeepTheBound(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := webhooks.New(st.Client, nil, webhooks.Options{MaxEndpoints: 3})
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	for i := range 2 {
		if _, _, err := svc.Create(ctx, webhooks.NewEndpoint{URL: fmt.Sprintf("https://receiver.example/%d", i), Events: allKinds}); err != nil {
			t.Fatal(err)
		}
	}
	var made, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			_, _, err := svc.Create(ctx, webhooks.NewEndpoint{URL: fmt.Sprintf("https://receiver.example/at-once/%d", i), Events: allKinds})
			switch e, _ := errors.AsType[*apperr.Error](err); {
			case err == nil:
				made.Add(1)
			case e != nil && e.Code == apperr.Conflict:
				refused.Add(1)
			default:
				t.Errorf("creation %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	eps, err := svc.Endpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if made.Load() != 1 || refused.Load() != 7 || len(eps) != 3 {
		t.Errorf("creations at once: %d made, %d refused, %d endpoints; want 1, 7 and 3", made.Load(), refused.Load(), len(eps))
	}
}

// INVENTORY_CREATED's payload carries the inventory as its creation wrote
// it, given by the writer rather than read back (records.Written): the
// same as a read of the stored inventory, to the microsecond.
func TestACreatedInventorysPayloadIsTheInventoryAsStored(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	_, secret, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL + "/hook", Events: []webhooks.Kind{"INVENTORY_CREATED"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	prop := unsigned(t, st, ctx).PropertyID
	material, err := st.Client.Material.Query().FirstID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs := records.NewService(st.Client, st, slog.New(slog.DiscardHandler), nil, nil, false)
	id, err := rs.Create(ctx, &records.Inventory{ID: uuid.New(), PropertyID: prop, Type: inventorytype.Colocacion,
		RentalPrice: decimal.RequireFromString("1850000.50"), Currency: "COP",
		Environments: []records.Environment{{Name: "Sala", Level: 1, Items: []records.Item{{Name: "Piso", MaterialID: material, Rating: 4}}}}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the creation's delivery", func() bool { return len(rcv.deliveries()) >= 1 })
	stored, err := st.Client.Inventory.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := rcv.deliveries()[0].payload.Data.Inventory
	want := webhooks.InventorySummary{ID: id, PropertyID: prop, Version: stored.Version, IsSigned: stored.IsSigned,
		SignatureDate: stored.SignatureDate, PDFSHA256: stored.PdfSha256, CreatedAt: stored.CreatedAt, UpdatedAt: stored.UpdatedAt}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("payload's inventory %s; stored %s", gotJSON, wantJSON)
	}
}

// A party's signature event tells that signature as it was made: the agent
// who signed remotely is reported remote in AGENT_SIGNED, before the
// inventory is fully signed (when its isRemoteSigned is set), and the
// owner who signed in person is not; FULLY_SIGNED tells no one signature.
func TestASignatureEventSaysWhetherThatSignatureWasRemote(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	svc := service(t, st)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	rcv := newReceiver(t, nil)
	_, secret, err := svc.Create(ctx, webhooks.NewEndpoint{URL: rcv.URL + "/hook", Events: []webhooks.Kind{"AGENT_SIGNED", "OWNER_SIGNED", "FULLY_SIGNED"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = secret
	rcv.mu.Unlock()
	inv := unsigned(t, st, ctx)
	rs := records.NewService(st.Client, st, slog.New(slog.DiscardHandler), nil, nil, false)
	for _, s := range []records.Signing{{InventoryID: inv.ID, Party: records.Agent, SignerName: "Ana Gómez", Remote: true},
		{InventoryID: inv.ID, Party: records.Owner, SignerName: "Luis Pérez"}} {
		if _, err := rs.Sign(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "the three deliveries", func() bool { return len(rcv.deliveries()) >= 3 })
	byKind := map[webhooks.Kind]webhooks.EventData{}
	for _, r := range rcv.deliveries() {
		if r.err != nil {
			t.Fatalf("delivery %s: %v", r.id, r.err)
		}
		byKind[r.payload.Data.Kind] = r.payload.Data
	}
	agent, owner, full := byKind["AGENT_SIGNED"], byKind["OWNER_SIGNED"], byKind["FULLY_SIGNED"]
	if s := agent.Signature; s == nil || s.Party != records.Agent || !s.Remote || s.Method != records.ByCredential ||
		s.SignerName == nil || *s.SignerName != "Ana Gómez" || s.SignedAt.IsZero() || agent.Inventory == nil || agent.Inventory.IsSigned {
		t.Errorf("AGENT_SIGNED: signature %+v, inventory %+v; want the agent's, remote, on an inventory not yet signed", s, agent.Inventory)
	}
	if s := owner.Signature; s == nil || s.Party != records.Owner || s.Remote || s.SignerName == nil || *s.SignerName != "Luis Pérez" {
		t.Errorf("OWNER_SIGNED: signature %+v; want the owner's, in person", s)
	}
	if full.Signature != nil {
		t.Errorf("FULLY_SIGNED: signature %+v; want none", full.Signature)
	}
}
