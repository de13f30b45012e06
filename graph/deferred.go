package graph

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// @defer is answered in parts, which only a multipart/mixed response can
// carry: graphqlhttp.TransportCheck refuses it sent any other way.

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
