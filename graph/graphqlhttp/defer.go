package graphqlhttp

import (
	"context"
	"net/http"

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

// TransportCheck refuses what the transport that brought an operation
// cannot serve, at once and saying how to send it: a mutation or
// subscription sent with GET (405), a subscription sent where one answer
// ends the request (400: it waited for events until the request deadline,
// then read as a slow query), and @defer where its parts cannot be
// delivered. graph.NewExecutor installs it.
type TransportCheck struct{}

var (
	_ graphql.HandlerExtension        = TransportCheck{}
	_ graphql.OperationContextMutator = TransportCheck{}
)

func (TransportCheck) ExtensionName() string                   { return "DeferNeedsMultipart" }
func (TransportCheck) Validate(graphql.ExecutableSchema) error { return nil }

func (TransportCheck) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	kind := opCtx.Operation.Operation
	if get, _ := ctx.Value(queriesOnlyKey{}).(bool); get && kind != ast.Query {
		refuseWith(ctx, http.StatusMethodNotAllowed)
		if kind == ast.Subscription {
			return badRequest("GET requests only allow query operations: %s", howToSubscribe)
		}
		return badRequest("GET requests only allow query operations: send a %s with POST", kind)
	}
	if once, _ := ctx.Value(answeredOnceKey{}).(bool); once && kind == ast.Subscription {
		refuseWith(ctx, http.StatusBadRequest)
		return badRequest("a subscription's events cannot come in one HTTP answer: %s", howToSubscribe)
	}
	if ok, _ := ctx.Value(incrementalDeliveryKey{}).(bool); ok || !Defers(opCtx.Operation) {
		return nil
	}
	return badRequest("@defer is answered in parts: send the operation with Accept: multipart/mixed, with POST or GET (Apollo Client and urql do), or leave @defer out")
}

// Defers reports whether an operation defers a part of itself (@defer), in
// its selections or a fragment they spread: gqlgen's executor answers it,
// in parts.
func Defers(op *ast.OperationDefinition) bool { return defers(op.SelectionSet, map[string]bool{}) }

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
