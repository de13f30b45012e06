package graph

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// answerBytes measures, as gqlgen's executor resolves an operation, about
// how many bytes its answer will hold: each field's name and value. gqlgen
// builds a whole answer before writing any of it, so the bound must hold
// while it resolves, not once it has finished. (The direct executor counts
// the bytes it has written: direct.Writer.)
type answerBytes struct {
	limit    int64 // 0: no limit
	written  atomic.Int64
	over     atomic.Bool
	reported atomic.Bool
}

// reset starts counting a new answer (a subscription's next event).
func (m *answerBytes) reset() {
	m.written.Store(0)
	m.over.Store(false)
	m.reported.Store(false)
}

type answerBytesKey struct{}

func withAnswerBytes(ctx context.Context, m *answerBytes) context.Context {
	return context.WithValue(ctx, answerBytesKey{}, m)
}

// answerMeter is the field interceptor that counts each field into the
// operation's answerBytes, and fails every field once the limit is passed:
// the operation then ends with no more work.
type answerMeter struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = answerMeter{}

func (answerMeter) ExtensionName() string                   { return "AnswerBytes" }
func (answerMeter) Validate(graphql.ExecutableSchema) error { return nil }

var errAnswerTooLarge = &apperr.Error{Code: apperr.ResponseTooLarge, Message: "the answer is over its size limit"}

func (answerMeter) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	m, _ := ctx.Value(answerBytesKey{}).(*answerBytes)
	if m == nil || m.limit == 0 {
		return next(ctx)
	}
	if m.over.Load() {
		return nil, errAnswerTooLarge
	}
	res, err := next(ctx)
	n := int64(valueBytes(res)) + 4 // "":,
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		n += int64(len(fc.Field.Alias))
	}
	if m.written.Add(n) > m.limit {
		m.over.Store(true)
		return nil, errAnswerTooLarge
	}
	return res, err
}

// firstReport says whether err is the first report of ctx's answer being
// over its limit: the presenter shows that one and drops the others, one
// for each field resolved after it.
func firstReport(ctx context.Context, err error) bool {
	if !errors.Is(err, errAnswerTooLarge) {
		return true
	}
	m, _ := ctx.Value(answerBytesKey{}).(*answerBytes)
	return m == nil || !m.reported.Swap(true)
}

// valueBytes is about how many bytes a resolved value takes in JSON: its
// length for text, a few bytes for anything else (an object's own fields
// are counted as they resolve).
func valueBytes(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return len(v) + 2
	case *string:
		if v != nil {
			return len(*v) + 2
		}
		return 4
	case uuid.UUID:
		return 38
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
		return 2 + rv.Len()*8
	}
	return 8
}
