package direct

import (
	"context"
	"sync"
)

// onceKey holds an operation's record of its writes (WithOnce).
type onceKey struct{}

// writes is what each top-level mutation field of an operation returned,
// by its alias.
type writes struct {
	mu      sync.Mutex
	byAlias map[string]written
}

type written struct {
	value any
	err   error
}

// WithOnce gives the operation of ctx a record of its writes, so that each
// top-level mutation field runs once whichever executor answers: the direct
// executor records what each returned (Once), and gqlgen's, should the
// direct one give the operation up after a write (a panic), answers from
// the record (Once again) rather than write again.
func WithOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, onceKey{}, &writes{byAlias: map[string]written{}})
}

// Once runs the mutation field alias of ctx's operation with write, or
// returns what it returned already: the direct executor calls it for each
// mutation field it runs, and gqlgen's executor, through a field
// interceptor, for each it runs.
func Once[T any](ctx context.Context, alias string, write func() (T, error)) (T, error) {
	w, _ := ctx.Value(onceKey{}).(*writes)
	if w == nil {
		return write()
	}
	w.mu.Lock()
	done, ran := w.byAlias[alias]
	w.mu.Unlock()
	if ran {
		t, _ := done.value.(T)
		return t, done.err
	}
	v, err := write()
	w.mu.Lock()
	w.byAlias[alias] = written{value: v, err: err}
	w.mu.Unlock()
	return v, err
}
