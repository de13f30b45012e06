package live

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A subscriber that does not read is cut once Buffer events wait for it:
// the others go on receiving, and the drops are counted.
func TestASlowSubscriberIsCutNotWaitedFor(t *testing.T) {
	h := New(nil, "sqlite3", nil, slog.New(slog.DiscardHandler), Options{Buffer: 3, PerCompany: 2})
	company := uuid.New()
	slow, err := h.Subscribe(company)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := h.Subscribe(company)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe(company); err == nil {
		t.Error("a third subscription of a company bounded to 2 was taken")
	}
	if _, err := h.Subscribe(uuid.New()); err != nil {
		t.Errorf("another company's subscription, refused: %v", err)
	}
	for id := int64(1); id <= 5; id++ {
		h.deliver([]*ent.RecordEvent{{ID: id, CompanyID: company}})
		<-reader.Events()
	}
	select {
	case <-slow.Cut():
	default:
		t.Fatal("the subscriber 5 events behind with a buffer of 3 was not cut")
	}
	// Delivered again (a listener back from a lost connection): once only.
	h.deliver([]*ent.RecordEvent{{ID: 5, CompanyID: company}})
	select {
	case ev := <-reader.Events():
		t.Errorf("event %d delivered twice", ev.ID)
	default:
	}
	if s := h.Stats(); s.Cut != 1 || s.Dropped != 1 || s.Delivered != 8 || s.Subscribers != 2 {
		t.Errorf("stats: %+v; want 1 cut, 1 dropped, 8 delivered (5 + the slow one's 3), 2 subscribers left", s)
	}
}

// A subscription the Hub feeds directly (inventoryEvents) is ended when
// its channel is full, and leaves the Hub when its context ends.
func TestADirectSubscriptionIsCutWhenFullAndLeavesWithItsContext(t *testing.T) {
	st := testdb.Open(t)
	h := New(st.Client, st.Dialect(), nil, slog.New(slog.DiscardHandler), Options{Buffer: 2})
	company := uuid.New()
	ctx, cancel := context.WithCancel(tenant.WithCompany(context.Background(), company))
	defer cancel()
	out, err := h.InventoryEvents(ctx, Filter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1001); id <= 1003; id++ {
		h.deliver([]*ent.RecordEvent{{ID: id, CompanyID: company, Kind: "inventory_created"}})
	}
	var got []string
	for ev := range out {
		got = append(got, ev.Cursor)
	}
	if len(got) != 2 || got[0] != "1001" || h.Stats().Cut != 1 || h.Stats().Subscribers != 0 {
		t.Fatalf("a subscription of buffer 2 handed 3 events unread: received %v, stats %+v; want 2, then cut", got, h.Stats())
	}

	other, stop := context.WithCancel(tenant.WithCompany(context.Background(), company))
	if _, err := h.InventoryEvents(other, Filter{}, nil); err != nil {
		t.Fatal(err)
	}
	if h.Stats().Subscribers != 1 {
		t.Fatalf("subscribers: %d, want 1", h.Stats().Subscribers)
	}
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for h.Stats().Subscribers != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.Stats().Subscribers; n != 0 {
		t.Errorf("after its context ended the subscription is still in: %d", n)
	}
}
