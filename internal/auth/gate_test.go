package auth

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// countingVerifier takes "good" and counts its calls and the most that ran
// at once.
type countingVerifier struct {
	calls, running, most atomic.Int32
	release              chan struct{}
}

func (v *countingVerifier) Verify(_ context.Context, credential string) (Caller, error) {
	v.calls.Add(1)
	n := v.running.Add(1)
	defer v.running.Add(-1)
	for m := v.most.Load(); n > m && !v.most.CompareAndSwap(m, n); m = v.most.Load() {
	}
	<-v.release
	if credential == "good" {
		return Caller{Company: uuid.Nil, Name: "good"}, nil
	}
	return Caller{}, invalid("unknown")
}

// A throttled address's credentials are verified one at a time, whatever
// the number sent at once; other addresses' are not held up by them; a good
// one verified lately is recognised without a verification.
func TestThrottledVerificationsRunOneAtATime(t *testing.T) {
	g := newGate()
	now := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return now }
	v := &countingVerifier{release: make(chan struct{})}
	close(v.release)
	if _, err := g.verify(context.Background(), v, "good", false); err != nil {
		t.Fatal(err)
	}

	v.release = make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { _, _ = g.verify(context.Background(), v, fmt.Sprint("guess-", i), true) })
	}
	// One guess is in the lane and holds it until released; an unthrottled
	// address's credential is verified beside it.
	for v.running.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan error)
	go func() { _, err := g.verify(context.Background(), v, "other", false); done <- err }()
	for v.running.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// The good credential, known, passes the throttled lane without a call.
	before := v.calls.Load()
	if c, err := g.verify(context.Background(), v, "good", true); err != nil || c.Name != "good" || v.calls.Load() != before {
		t.Errorf("a credential verified lately, from a throttled address: %+v, %v, %d calls, want it known at once", c, err, v.calls.Load()-before)
	}
	close(v.release)
	wg.Wait()
	<-done
	if most := v.most.Load(); most != 2 {
		t.Errorf("at most %d verifications at once, want 2: one throttled, one not", most)
	}

	// Past recentFor it is verified again, and a wait for the lane ends
	// with the request.
	now = now.Add(recentFor)
	before = v.calls.Load()
	if _, err := g.verify(context.Background(), v, "good", true); err != nil || v.calls.Load() != before+1 {
		t.Errorf("a credential verified %s ago: %v, %d calls, want one", recentFor, err, v.calls.Load()-before)
	}
	g.lane <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.verify(ctx, v, "guess", true); err != context.Canceled {
		t.Errorf("waiting for a full lane after the request ended: %v, want context.Canceled", err)
	}
}
