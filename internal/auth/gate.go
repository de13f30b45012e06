package auth

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// recentFor is how long a verified credential is recognised without being
// verified again, and only for a throttled address (others verify every
// time). It is the longest a key revoked by another process (`inventoryd
// apikey revoke`) may still be served there, and shorter than a token's
// tolerated clock skew (a minute by default), so no token is served from
// memory much past the expiry its verification would refuse.
const recentFor = 30 * time.Second

// maxRecent bounds the credentials remembered: only verified ones are, so
// an attacker cannot grow it, but many callers can.
const maxRecent = 10_000

// gate verifies credentials, throttled addresses' through a narrow lane.
type gate struct {
	// lane admits one verification at a time from all throttled addresses:
	// a valid credential among them waits its turn, never refused, while
	// their guesses cost the database (or the CPU, for signatures) at most
	// one check at a time however fast they are sent.
	lane chan struct{}
	now  func() time.Time

	mu     sync.Mutex
	recent map[[sha256.Size]byte]recent
}

type recent struct {
	caller Caller
	until  time.Time
}

func newGate() *gate {
	return &gate{lane: make(chan struct{}, 1), now: time.Now, recent: map[[sha256.Size]byte]recent{}}
}

// verify checks credential with v. For a throttled address, a credential
// verified within recentFor is taken from memory, and any other goes
// through the lane.
func (g *gate) verify(ctx context.Context, v Verifier, credential string, throttled bool) (Caller, error) {
	sum := sha256.Sum256([]byte(credential))
	if throttled {
		now := g.now()
		g.mu.Lock()
		known, ok := g.recent[sum]
		g.mu.Unlock()
		if ok && now.Before(known.until) {
			return known.caller, nil
		}
		select {
		case g.lane <- struct{}{}:
			defer func() { <-g.lane }()
		case <-ctx.Done():
			return Caller{}, ctx.Err()
		}
	}
	caller, err := v.Verify(ctx, credential)
	if err == nil {
		g.remember(sum, caller)
	}
	return caller, err
}

func (g *gate) remember(sum [sha256.Size]byte, caller Caller) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.recent[sum]; !ok && len(g.recent) >= maxRecent {
		for k, r := range g.recent {
			if !now.Before(r.until) || len(g.recent) >= maxRecent {
				delete(g.recent, k)
			}
		}
	}
	g.recent[sum] = recent{caller: caller, until: now.Add(recentFor)}
}
