package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/waitbudget"
)

// operationGate holds each operation a live connection carries (a
// WebSocket's, an SSE stream's) to what an HTTP request is held to by the
// middleware it does not pass per operation: the caller's rate, a place in
// its company's fair share, and the request deadline with its patience. The
// cost budget and the answer bound are the executor's, for every transport;
// the budget is charged under the connection's fair-share key. A
// subscription holds no place and no deadline for its life: each read of
// its events is bounded by the executor (graph.ExecutorOptions.EventReadTimeout).
type operationGate struct {
	queue         *fairshare.Queue
	timeout, wait time.Duration
}

// executor is exec behind the gate; authn, when set, charges each
// operation to its caller's rate (a WebSocket's: an SSE stream's one
// operation was charged as its request was).
func (g operationGate) executor(exec graphql.GraphExecutor, authn *auth.Authenticator) graphql.GraphExecutor {
	return gatedExecutor{GraphExecutor: exec, gate: g, authn: authn}
}

type gatedExecutor struct {
	graphql.GraphExecutor
	gate  operationGate
	authn *auth.Authenticator
}

// CreateOperationContext refuses an operation past its caller's rate before
// it is parsed or priced, as the middleware refuses a request.
func (e gatedExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	if e.authn != nil {
		if refusal := e.authn.AllowOperation(ctx); refusal != nil {
			// What gqlgen's executor gives an operation it could not parse:
			// its errors are dispatched without one.
			// gqlgen's WebSocket transport sends these errors as they are:
			// presented here, as every error is.
			opCtx := &graphql.OperationContext{RawQuery: params.Query, Variables: params.Variables, OperationName: params.OperationName,
				Headers: params.Headers, Stats: graphql.Stats{Read: params.ReadTime, OperationStart: graphql.GetStartTime(ctx)}}
			presented := e.DispatchError(graphql.WithOperationContext(ctx, opCtx), gqlerror.List{gqlerror.WrapPath(nil, refusal)})
			return opCtx, presented.Errors
		}
	}
	return e.GraphExecutor.CreateOperationContext(ctx, params)
}

// DispatchOperation runs a query or mutation in a place of its company's
// fair share and under the request deadline, both given back when its last
// answer is out.
func (e gatedExecutor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if opCtx.Operation != nil && opCtx.Operation.Operation == ast.Subscription {
		return e.GraphExecutor.DispatchOperation(ctx, opCtx)
	}
	ctx, cancel := context.WithTimeout(waitbudget.With(ctx, e.gate.wait), e.gate.timeout)
	release, err := e.gate.queue.Acquire(ctx, fairshare.KeyFrom(ctx))
	if err != nil {
		cancel()
		ctx = graphql.WithOperationContext(ctx, opCtx)
		return graphql.OneShot(e.DispatchError(ctx, gqlerror.List{gqlerror.WrapPath(nil, err)})), ctx
	}
	done := func() { release(); cancel() }
	stop := context.AfterFunc(ctx, done) // a connection closed mid-answer gives them back too
	responses, ctx := e.GraphExecutor.DispatchOperation(ctx, opCtx)
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if res == nil {
			stop()
			done()
		}
		return res
	}, ctx
}
