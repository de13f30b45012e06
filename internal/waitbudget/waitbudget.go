// Package waitbudget bounds how long one request waits, in all, for what it
// shares with others: a place in the fair share and database connections.
// Each of those waits is bounded by the acquire timeout on its own; a
// request that queued for a place, then waited for a connection for each of
// its statements, could otherwise wait that timeout several times over
// before being told the service is busy.
package waitbudget

import (
	"context"
	"sync/atomic"
	"time"
)

type budgetKey struct{}

// budget is what is left of a request's patience, in nanoseconds. Waits
// that overlap (gqlgen's executor resolves fields at once) each spend their
// own time, so a request gives up no later than it would waiting alone.
type budget struct{ left atomic.Int64 }

// With gives ctx's request a patience of d, in all its waits; a context that
// has one already keeps it.
func With(ctx context.Context, d time.Duration) context.Context {
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok && b != nil {
		return ctx
	}
	b := &budget{}
	b.left.Store(int64(d))
	return context.WithValue(ctx, budgetKey{}, b)
}

// Without is ctx without a patience, for a wait that is the request's own
// work taking its turn rather than others' holding the service: the photo
// decodes of one report, queued one behind another in their company's
// share. Those overlap, and each spending its own wait would drain the
// patience several times as fast; the request's deadline bounds them.
func Without(ctx context.Context) context.Context {
	return context.WithValue(ctx, budgetKey{}, (*budget)(nil))
}

// Allow is how long the caller may wait now: what is left of ctx's patience,
// at most limit; limit itself when ctx has none (a command's statements).
// Zero or less: no waiting at all.
func Allow(ctx context.Context, limit time.Duration) time.Duration {
	b, ok := ctx.Value(budgetKey{}).(*budget)
	if !ok || b == nil {
		return limit
	}
	return min(time.Duration(b.left.Load()), limit)
}

// Spend takes d, the time the caller waited, from ctx's patience.
func Spend(ctx context.Context, d time.Duration) {
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok && b != nil {
		b.left.Add(-int64(d))
	}
}
