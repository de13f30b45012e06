package live

import (
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
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
