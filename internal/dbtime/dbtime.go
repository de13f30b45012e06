// Package dbtime bounds the database time of one request: its statements
// may take so much time in all, each running under what is left and
// stopped past it (PostgreSQL is sent a cancel, SQLite is interrupted).
// The request deadline bounds how long a request lasts; this bounds how
// long it holds the database, which a document priced just under the limit
// could hold for seconds (69 or branches under a count, 1.18M items). The
// budget of an operation is derived from its price (graph: databaseTime).
package dbtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
)

type budgetKey struct{}

// budget is a request's database time: all of it, and what is left in
// nanoseconds. Statements that overlap (gqlgen resolves fields at once)
// each spend their own time.
type budget struct {
	all  time.Duration
	left atomic.Int64
}

// With gives ctx's request d of database time (raceScale times that under
// the race detector); a context that has a budget keeps it.
func With(ctx context.Context, d time.Duration) context.Context {
	if _, ok := ctx.Value(budgetKey{}).(*budget); ok {
		return ctx
	}
	d *= raceScale
	b := &budget{all: d}
	b.left.Store(int64(d))
	return context.WithValue(ctx, budgetKey{}, b)
}

// Start is a statement's context: ctx, bounded by what is left of its
// request's database time; finish, called with the statement's error once
// it is done (its rows closed), takes its time from the budget and returns
// the error to answer: a statement the budget stopped is DEADLINE_EXCEEDED
// saying so. A request whose budget is spent is refused before its
// statement is sent (err). Without a budget (a command's statements), ctx
// as it is.
func Start(ctx context.Context) (stmt context.Context, finish func(error) error, err error) {
	b, ok := ctx.Value(budgetKey{}).(*budget)
	if !ok {
		return ctx, func(err error) error { return err }, nil
	}
	left := time.Duration(b.left.Load())
	if left <= 0 {
		return ctx, nil, spent(b.all, nil)
	}
	stmt, cancel := context.WithTimeout(ctx, left)
	start := time.Now()
	return stmt, func(err error) error {
		b.left.Add(-int64(time.Since(start)))
		stopped := stmt.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil && stopped {
			return spent(b.all, err)
		}
		return err
	}, nil
}

// Refund gives ctx's request back d of its database time: time a
// statement waited on a server that never answered (a frozen standby) did
// no work for it, and the statement runs again elsewhere.
func Refund(ctx context.Context, d time.Duration) {
	b, ok := ctx.Value(budgetKey{}).(*budget)
	if !ok {
		return
	}
	for {
		left := b.left.Load()
		refunded := min(left+int64(d), int64(b.all))
		if b.left.CompareAndSwap(left, refunded) {
			return
		}
	}
}

// Stopped reports whether err is a statement stopped for its request's
// database time.
func Stopped(err error) bool {
	var e *apperr.Error
	return errors.As(err, &e) && e.Code == apperr.DeadlineExceeded && errors.Is(err, errSpent)
}

var errSpent = errors.New("dbtime: the request's database time is spent")

func spent(all time.Duration, cause error) *apperr.Error {
	return &apperr.Error{Code: apperr.DeadlineExceeded, Cause: errors.Join(errSpent, cause),
		Message: fmt.Sprintf("the operation used the %s of database time its price allows, and was stopped: ask for fewer records, smaller lists or simpler filters", all)}
}
