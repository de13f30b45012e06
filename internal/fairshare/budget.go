package fairshare

import (
	"math"
	"sync"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
)

// Budget is a cost-based rate per company, in the style of Shopify's and
// GitHub's GraphQL APIs: each company has a bucket of Capacity points that
// refills at RestoreRate points a second, and each operation takes its price
// (graph's cost check) from it before it runs. A company whose bucket holds
// less than an operation's price is refused that operation (RATE_LIMITED,
// with when to retry) and nothing is taken. With a shared backend (Redis:
// NewSharedBudget) a company has one bucket for every instance, and this
// instance's own while Redis is down. A nil *Budget charges nothing.
type Budget struct {
	capacity    float64
	restoreRate float64
	shared      *sharedlimit.Redis

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	points float64
	at     time.Time
}

// maxBudgetBuckets bounds the keys remembered at once; a full bucket is the
// same as a forgotten one, so those go first.
const maxBudgetBuckets = 100_000

// NewBudget returns a budget of capacity points per company refilled at
// restoreRate a second; nil when either is 0 (no budget).
func NewBudget(capacity, restoreRate float64) *Budget {
	return NewSharedBudget(capacity, restoreRate, nil)
}

// NewSharedBudget is NewBudget whose buckets are kept in shared; shared
// nil: NewBudget.
func NewSharedBudget(capacity, restoreRate float64, shared *sharedlimit.Redis) *Budget {
	if capacity <= 0 || restoreRate <= 0 {
		return nil
	}
	return &Budget{capacity: capacity, restoreRate: restoreRate, shared: shared, buckets: map[string]*bucket{}}
}

// Status is what a company's budget holds after an operation, as answers
// report it (extensions.cost.throttleStatus).
type Status struct {
	MaximumAvailable   float64 `json:"maximumAvailable"`
	CurrentlyAvailable float64 `json:"currentlyAvailable"`
	RestoreRate        float64 `json:"restoreRate"`
}

// Charge takes cost points from key's bucket, or refuses the operation when
// the bucket holds fewer: RATE_LIMITED, retry when it will hold enough. An
// operation dearer than the whole capacity is never refused for want of
// points alone once the bucket is full (the price limit bounds it), so that
// no configuration makes an accepted operation impossible.
func (b *Budget) Charge(key string, cost int, now time.Time) (Status, *apperr.Error) {
	if b == nil {
		return Status{}, nil
	}
	// In Redis (GCRA, on Redis's clock rather than now), the price is taken
	// up to the capacity: GCRA cannot take more than its burst, and a price
	// over the capacity, which a full bucket pays here, empties it there.
	need := math.Min(float64(cost), b.capacity)
	rate := sharedlimit.Rate{PerSecond: b.restoreRate, Burst: int(math.Ceil(b.capacity))}
	if res, decided := b.shared.Take("cost:"+key, rate, int(math.Ceil(need))); decided {
		status := Status{MaximumAvailable: b.capacity, CurrentlyAvailable: math.Floor(res.Available), RestoreRate: b.restoreRate}
		if !res.Allowed {
			return status, b.refusal(res.RetryAfter)
		}
		return status, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := b.buckets[key]
	if bk == nil {
		if len(b.buckets) >= maxBudgetBuckets {
			b.forgetFull(now)
		}
		bk = &bucket{points: b.capacity, at: now}
		b.buckets[key] = bk
	}
	bk.points = math.Min(b.capacity, bk.points+now.Sub(bk.at).Seconds()*b.restoreRate)
	bk.at = now
	if bk.points < need {
		return b.status(bk), b.refusal(time.Duration((need - bk.points) / b.restoreRate * float64(time.Second)))
	}
	bk.points -= float64(cost)
	return b.status(bk), nil
}

// refusal refuses an operation the bucket will afford after wait.
func (b *Budget) refusal(wait time.Duration) *apperr.Error {
	return &apperr.Error{Code: apperr.RateLimited, RetryAfter: max(wait, time.Second),
		Message: "your company's cost budget is spent: this operation costs more than it holds now (extensions.cost says how much); retry after the Retry-After seconds, or ask for less"}
}

func (b *Budget) status(bk *bucket) Status {
	return Status{MaximumAvailable: b.capacity, CurrentlyAvailable: math.Floor(bk.points), RestoreRate: b.restoreRate}
}

// forgetFull drops the buckets that have refilled, then any, to stay bounded.
func (b *Budget) forgetFull(now time.Time) {
	for key, bk := range b.buckets {
		if bk.points+now.Sub(bk.at).Seconds()*b.restoreRate >= b.capacity {
			delete(b.buckets, key)
		}
	}
	for key := range b.buckets {
		if len(b.buckets) < maxBudgetBuckets {
			break
		}
		delete(b.buckets, key)
	}
}
