package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/propertyrecords/inventory/internal/sharedlimit"
)

// Limiter is a token bucket per caller (golang.org/x/time/rate): each may
// send Burst requests at once and PerSecond after that. With a shared
// backend (Redis: NewSharedLimiter), Allow takes from one bucket per caller
// for all instances, and from this instance's own while Redis is down. A
// nil Limiter allows everything.
type Limiter struct {
	perSecond rate.Limit
	burst     int
	shared    *sharedlimit.Redis

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// maxBuckets bounds the callers remembered at once: in header mode a bucket
// is per client address, which a client chooses freely.
const maxBuckets = 100_000

// NewLimiter returns a limiter of perSecond requests per caller with bursts
// of burst; nil when perSecond is 0 (no limit).
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	return NewSharedLimiter(perSecond, burst, nil)
}

// NewSharedLimiter is NewLimiter whose buckets are kept in shared (one per
// caller for every instance using it); shared nil: NewLimiter.
func NewSharedLimiter(perSecond float64, burst int, shared *sharedlimit.Redis) *Limiter {
	if perSecond <= 0 {
		return nil
	}
	return &Limiter{perSecond: rate.Limit(perSecond), burst: max(burst, 1), shared: shared, buckets: map[string]*rate.Limiter{}}
}

// Allow takes one request from key's bucket, or says how long until one is
// there.
func (l *Limiter) Allow(key string) (retryAfter time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	if res, decided := l.shared.Take("rate:"+key, sharedlimit.Rate{PerSecond: float64(l.perSecond), Burst: l.burst}, 1); decided {
		return res.RetryAfter, res.Allowed
	}
	return l.allowHere(key)
}

// allowHere is Allow on this instance's own bucket: for the refused
// addresses' lane, which guards this instance's verifier, and for every key
// without Redis.
func (l *Limiter) allowHere(key string) (retryAfter time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	now := time.Now()
	l.mu.Lock()
	bucket := l.buckets[key]
	if bucket == nil {
		if len(l.buckets) >= maxBuckets {
			l.forgetFull(now)
		}
		bucket = rate.NewLimiter(l.perSecond, l.burst)
		l.buckets[key] = bucket
	}
	l.mu.Unlock()
	r := bucket.ReserveN(now, 1)
	if delay := r.DelayFrom(now); delay > 0 {
		r.CancelAt(now)
		return delay, false
	}
	return 0, true
}

// forgetFull drops the buckets that have refilled: a new bucket is the same.
// Should every one still be in use, the oldest habits go too: the map stays
// bounded, at worst granting a forgotten caller a fresh burst.
func (l *Limiter) forgetFull(now time.Time) {
	for key, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, key)
		}
	}
	for key := range l.buckets {
		if len(l.buckets) < maxBuckets {
			break
		}
		delete(l.buckets, key)
	}
}

// Exhausted reports, without taking anything, whether key's bucket on this
// instance is empty, and how long until it is not. It reads the buckets
// allowHere takes from: the refused addresses' lane is per instance, as the
// gate it throttles is.
func (l *Limiter) Exhausted(key string) (retryAfter time.Duration, exhausted bool) {
	if l == nil {
		return 0, false
	}
	l.mu.Lock()
	bucket := l.buckets[key]
	l.mu.Unlock()
	if bucket == nil {
		return 0, false
	}
	now := time.Now()
	if tokens := bucket.TokensAt(now); tokens < 1 {
		return time.Duration((1 - tokens) / float64(l.perSecond) * float64(time.Second)), true
	}
	return 0, false
}
