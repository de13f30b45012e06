package fairshare

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

// TestAFreedPlaceGoesToTheCompanyWithFewestRunning: companies A and C hold
// every place and A has more requests waiting; company B's one request is
// served at the next place that frees, ahead of all of A's.
func TestAFreedPlaceGoesToTheCompanyWithFewestRunning(t *testing.T) {
	q := NewQueue(QueueOptions{Places: 2, MaxQueued: 10, MaxWait: 10 * time.Second})
	ctx := context.Background()
	var releases []func()
	for _, key := range []string{"A", "C"} {
		release, err := q.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	order := make(chan string, 10)
	acquire := func(key string) {
		release, err := q.Acquire(ctx, key)
		if err != nil {
			order <- "error " + err.Error()
			return
		}
		order <- key
		release()
	}
	for range 5 {
		go acquire("A")
	}
	waitWaiting(t, q, 5)
	go acquire("B")
	waitWaiting(t, q, 6)
	releases[1]() // C's place: B has none running, A holds its most
	if got := <-order; got != "B" {
		t.Fatalf("the first place freed went to %s, want B (no request running)", got)
	}
	releases[0]() // A's place: its waiting requests take it in turn
	for range 5 {
		if got := <-order; got != "A" {
			t.Fatalf("got %s, want A's waiting requests served", got)
		}
	}
	// The last request releases its place just after it is served.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		running, waiting := q.InFlight()
		q.mu.Lock()
		keys := len(q.keys)
		q.mu.Unlock()
		if running == 0 && waiting == 0 && keys == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after all: %d running, %d waiting, %d keys kept; want none", running, waiting, keys)
		}
	}
}

// TestAloneACompanyUsesAllButAQuarter: a lone company gets three places of
// four at once, and a newcomer the fourth at once, without waiting for any.
func TestAloneACompanyUsesAllButAQuarter(t *testing.T) {
	q := NewQueue(QueueOptions{Places: 4, MaxQueued: 1, MaxWait: time.Millisecond})
	for i := range 3 {
		if _, err := q.Acquire(context.Background(), "A"); err != nil {
			t.Fatalf("request %d of a lone company: %v, want a place", i+1, err)
		}
	}
	if _, err := q.Acquire(context.Background(), "A"); err == nil {
		t.Error("a lone company's fourth request of four places: a place, want it kept for others")
	}
	if _, err := q.Acquire(context.Background(), "B"); err != nil {
		t.Errorf("a newcomer: %v, want the place kept free", err)
	}
}

// TestTooManyWaitingOrWaitingTooLongIsRefused: past its queue a company is
// refused at once, RATE_LIMITED with a Retry-After; a wait past MaxWait is
// RATE_LIMITED for a company with requests running (its share is in use),
// UNAVAILABLE for one without; a request whose deadline passes while it
// waits says so.
func TestTooManyWaitingOrWaitingTooLongIsRefused(t *testing.T) {
	q := NewQueue(QueueOptions{Places: 1, MaxQueued: 1, MaxWait: 50 * time.Millisecond})
	if _, err := q.Acquire(context.Background(), "A"); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = q.Acquire(context.Background(), "A") }()
	waitWaiting(t, q, 1)
	_, err := q.Acquire(context.Background(), "A")
	if code, retry := codeOf(err); code != apperr.RateLimited || retry <= 0 {
		t.Errorf("past the queue: %v, want RATE_LIMITED with a Retry-After", err)
	}
	_, err = q.Acquire(context.Background(), "B")
	if code, _ := codeOf(err); code != apperr.Unavailable {
		t.Errorf("B waiting past MaxWait with nothing running: %v, want UNAVAILABLE", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = q.Acquire(ctx, "C")
	if code, _ := codeOf(err); code != apperr.DeadlineExceeded {
		t.Errorf("a deadline passing while waiting: %v, want DEADLINE_EXCEEDED", err)
	}
}

// TestTheWaitForAPlaceSharesTheRequestsPatience: a request waits for a place
// no longer than what is left of its patience, and what it waited is gone
// from the patience its statements then have: the place and the database
// connections together take at most the acquire timeout.
func TestTheWaitForAPlaceSharesTheRequestsPatience(t *testing.T) {
	q := NewQueue(QueueOptions{Places: 1, MaxQueued: 10, MaxWait: 10 * time.Second})
	if _, err := q.Acquire(context.Background(), "A"); err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	ctx := waitbudget.With(context.Background(), wait)
	start := time.Now()
	_, err := q.Acquire(ctx, "B")
	if code, _ := codeOf(err); code != apperr.Unavailable {
		t.Errorf("waiting past the request's patience: %v, want UNAVAILABLE", err)
	}
	if elapsed := time.Since(start); elapsed < wait || elapsed >= 10*wait {
		t.Errorf("refused after %s, want the request's patience (%s), not the queue's wait (10s)", elapsed, wait)
	}
	if left := waitbudget.Allow(ctx, time.Hour); left > 0 {
		t.Errorf("patience left after waiting it out: %s, want none", left)
	}
}

// TestTheBudgetRefusesPastItsPointsAndRefills charges an operation's price
// and refuses one that costs more than what is left, until it refills.
func TestTheBudgetRefusesPastItsPointsAndRefills(t *testing.T) {
	b := NewBudget(1_000, 100)
	now := time.Unix(1_700_000_000, 0)
	status, err := b.Charge("A", 700, now)
	if err != nil || status.CurrentlyAvailable != 300 || status.MaximumAvailable != 1_000 || status.RestoreRate != 100 {
		t.Fatalf("first charge: %+v %v, want 300 of 1000 left", status, err)
	}
	_, err = b.Charge("A", 400, now)
	if err == nil || err.Code != apperr.RateLimited || err.RetryAfter != time.Second {
		t.Fatalf("over what is left: %v, want RATE_LIMITED, retry in 1 s (100 points at 100 a second)", err)
	}
	if status, _ := b.Charge("B", 400, now); status.CurrentlyAvailable != 600 {
		t.Errorf("another company's budget: %+v, want its own (600 left)", status)
	}
	if _, err := b.Charge("A", 400, now.Add(time.Second)); err != nil {
		t.Errorf("a second later: %v, want the 400 charged", err)
	}
	// An operation dearer than the whole budget is served from a full one.
	if _, err := b.Charge("C", 5_000, now); err != nil {
		t.Errorf("an operation over the capacity, on a full budget: %v", err)
	}
	if NewBudget(0, 100) != nil {
		t.Error("a budget of 0 points, want none")
	}
}

func codeOf(err error) (apperr.Code, time.Duration) {
	var e *apperr.Error
	if !errors.As(err, &e) {
		return "", 0
	}
	return e.Code, e.RetryAfter
}

func waitWaiting(t *testing.T, q *Queue, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, waiting := q.InFlight(); waiting == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %d waiting", n)
		}
		time.Sleep(time.Millisecond)
	}
}
