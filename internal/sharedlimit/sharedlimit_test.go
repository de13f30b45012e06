package sharedlimit_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func open(t *testing.T) *sharedlimit.Redis {
	t.Helper()
	return testdbRedis(t)
}

// testdbRedis is a Redis of tb's own, its calls bounded loosely: a loaded
// test machine is no outage.
func testdbRedis(t testing.TB) *sharedlimit.Redis {
	t.Helper()
	rds := testdb.StartRedis(t)
	r, err := sharedlimit.Open(rds.URL(), slog.New(slog.DiscardHandler), sharedlimit.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A fractional rate is held as such: half a request a second, a burst of
// 3, is 3 at once, then a refusal that says to come back in about 2 s.
func TestTakeHoldsAFractionalRateAndItsBurst(t *testing.T) {
	r := open(t)
	rate := sharedlimit.Rate{PerSecond: 0.5, Burst: 3}
	for i := range 3 {
		if res, ok := r.Take("k", rate, 1); !ok || !res.Allowed {
			t.Fatalf("request %d of a burst of 3: %+v, decided %v", i, res, ok)
		}
	}
	res, ok := r.Take("k", rate, 1)
	if !ok || res.Allowed || res.RetryAfter < 1500*time.Millisecond || res.RetryAfter > 2*time.Second {
		t.Errorf("past the burst: %+v; want refused, retry in about 2 s", res)
	}
	if res, _ := r.Take("other", rate, 1); !res.Allowed {
		t.Error("another key: refused, want its own bucket")
	}
}

// The cost budget in Redis refuses an operation dearer than what is left
// without taking anything: a cheaper one is served after it, and the
// status says what is left.
func TestASharedBudgetRefusesWithoutTaking(t *testing.T) {
	b := fairshare.NewSharedBudget(1000, 1, open(t))
	status, err := b.Charge("company", 600, time.Now())
	if err != nil || status.CurrentlyAvailable < 399 || status.CurrentlyAvailable > 401 {
		t.Fatalf("600 of 1000: %+v %v; want served, 400 left", status, err)
	}
	status, err = b.Charge("company", 600, time.Now())
	if err == nil || err.RetryAfter < 199*time.Second || status.CurrentlyAvailable < 399 || status.CurrentlyAvailable > 401 {
		t.Errorf("600 more: %+v %v; want refused, retry in about 200 s, 400 still left", status, err)
	}
	if status, err := b.Charge("company", 300, time.Now()); err != nil || status.CurrentlyAvailable > 101 {
		t.Errorf("300 after the refusal: %+v %v; want served from the 400 the refusal left", status, err)
	}
	// Dearer than the whole budget: served from a full bucket, which it
	// empties.
	if _, err := b.Charge("another", 5000, time.Now()); err != nil {
		t.Errorf("an operation dearer than the budget on a full bucket: %v; want served", err)
	}
	if _, err := b.Charge("another", 1, time.Now()); err == nil {
		t.Error("after it: served; want the bucket empty")
	}
}

// A company's places are counted across holders, and a place given back
// is free again.
func TestAcquireCountsPlacesAndReleaseFreesThem(t *testing.T) {
	r := open(t)
	var releases []func()
	for i := range 2 {
		release, shared, allowed := r.Acquire("company", 2)
		if !shared || !allowed {
			t.Fatalf("place %d of 2: shared %v allowed %v", i, shared, allowed)
		}
		releases = append(releases, release)
	}
	if _, shared, allowed := r.Acquire("company", 2); !shared || allowed {
		t.Errorf("a third place of 2: shared %v allowed %v; want refused by Redis", shared, allowed)
	}
	releases[0]()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, _, allowed := r.Acquire("company", 2); allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a place given back: not free again within 5 s")
		}
	}
}
