package graph

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// @defer is answered in parts, which only a multipart/mixed response can
// carry (as Apollo Client and urql ask for it: Accept: multipart/mixed).
// Sent any other way, gqlgen answered one body holding the first part, its
// deferred fields missing and hasNext true, and the rest never came. Such an
// operation is refused instead, saying how to send it.

type incrementalDeliveryKey struct{}

// withIncrementalDelivery marks a request whose answer may come in parts.
func withIncrementalDelivery(ctx context.Context) context.Context {
	return context.WithValue(ctx, incrementalDeliveryKey{}, true)
}

// deferExtension refuses @defer where its parts cannot be delivered.
type deferExtension struct{}

var (
	_ graphql.HandlerExtension        = deferExtension{}
	_ graphql.OperationContextMutator = deferExtension{}
)

func (deferExtension) ExtensionName() string                   { return "DeferNeedsMultipart" }
func (deferExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (deferExtension) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if get, _ := ctx.Value(queriesOnlyKey{}).(bool); get && opCtx.Operation.Operation != ast.Query {
		return badRequest("GET requests only allow query operations: send a %s with POST", opCtx.Operation.Operation)
	}
	if ok, _ := ctx.Value(incrementalDeliveryKey{}).(bool); ok || !defers(opCtx.Operation.SelectionSet, map[string]bool{}) {
		return nil
	}
	return badRequest("@defer is answered in parts: send the operation with Accept: multipart/mixed, with POST or GET (Apollo Client and urql do), or leave @defer out")
}

// defers reports whether a selection set, or a fragment it spreads, defers.
func defers(set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if defers(s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || defers(s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if s.Definition != nil && !seen[s.Name] {
				seen[s.Name] = true
				if defers(s.Definition.SelectionSet, seen) {
					return true
				}
			}
		}
	}
	return false
}

// Deferred fields are absent from the payload that comes before them, as the
// incremental delivery proposal has it and Apollo Client's and urql's
// handlers expect: gqlgen wrote them as null there (a null in a non-null
// field, such as property: Property!, which clients then read as the
// answer), and their values in a later part. graph/gqlgen.go rewrites
// gqlgen's generated object marshalers to call resolveConcurrently instead
// of FieldSet.ResolveConcurrently, which marks the slots it defers, and to
// write an object that deferred any through withoutDeferred.

// deferredSlot marks a field of a FieldSet whose value comes in a later
// part; it is never written.
type deferredSlot struct{}

func (deferredSlot) MarshalGQL(io.Writer) {}

var deferredValue graphql.Marshaler = deferredSlot{}

// resolveConcurrently is FieldSet.ResolveConcurrently, marking field i as
// deferred when gqlgen defers it (it then puts a null in its slot).
func resolveConcurrently(out *graphql.FieldSet, field graphql.CollectedField, oc *graphql.OperationContext, deferred *graphql.DeferredGroup,
	i int, recoverFromPanic, nonNull bool, resolve func(context.Context) graphql.Marshaler,
) {
	out.ResolveConcurrently(oc, deferred, i, recoverFromPanic, nonNull, resolve)
	if field.IsDeferred() {
		out.Values[i] = deferredValue
	}
}

// withoutDeferred writes out as gqlgen does (each alias once, in order),
// leaving out the fields it deferred.
func withoutDeferred(fields []graphql.CollectedField, out *graphql.FieldSet) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, "{")
		written := make(map[string]bool, len(fields))
		for i, field := range fields {
			if out.Values[i] == deferredValue || written[field.Alias] {
				continue
			}
			if len(written) > 0 {
				_, _ = io.WriteString(w, ",")
			}
			written[field.Alias] = true
			graphql.MarshalString(field.Alias).MarshalGQL(w)
			_, _ = io.WriteString(w, ":")
			out.Values[i].MarshalGQL(w)
		}
		_, _ = io.WriteString(w, "}")
	})
}
