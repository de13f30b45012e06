package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/direct"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/previous"
	"github.com/propertyrecords/inventory/internal/requestid"
	"github.com/propertyrecords/inventory/internal/timeline"
	"github.com/propertyrecords/inventory/internal/tracing"
)

// NewExecutor builds the service's one GraphQL executor: /graphql serves it
// over HTTP (Handler) and the REST adapter runs its operations on it
// in-process, so both share the parsed-query cache, the limits, the error
// presenter and the recover func.
func NewExecutor(client *ent.Client, nodes NodeLocator, store *files.Store, log *slog.Logger) *Executor {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{client: client, nodes: nodes, files: store}})
	if client != nil { // nil: a schema priced, never run (cost tests)
		noteLoads(client)
	}
	limits := DefaultLimits
	lists := readListSizes(schema.Schema())
	queries := defaultsCache{Cache: lru.New[*ast.QueryDocument](1000), lists: lists}

	exec := executor.New(schema)
	exec.SetQueryCache(queries)
	exec.SetParserTokenLimit(limits.Tokens)
	// The direct executor runs no field, root field, operation or response
	// middleware: an extension that adds one must be served by it too (as
	// listSpans is, by code generated for it).
	exec.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	exec.Use(limitsExtension{limits: limits, cache: queries})
	exec.Use(extension.Introspection{})
	exec.Use(inputsExtension{limits: limits, schema: schema.Schema()})
	exec.Use(costExtension{limit: limits.Cost, lists: lists})
	exec.Use(deferExtension{})
	exec.Use(listSpans{}) // the direct executor's code makes the same spans (graph/gqlgen.go: ListSpan)
	presenter, recoverer := presentError(log), recoverPanic(log)
	exec.SetErrorPresenter(presenter)
	exec.SetRecoverFunc(recoverer)
	return &Executor{Executor: exec, schema: schema.(*executableSchema), presenter: presenter, recoverer: recoverer}
}

// Executor runs the service's operations. Queries run on the direct executor
// (see internal/direct), which gives up to gqlgen's on anything but a clean
// answer. And it answers every operation, even one whose request ran past its
// deadline (gqlgen's answers nothing then).
type Executor struct {
	*executor.Executor
	schema    *executableSchema
	presenter graphql.ErrorPresenterFunc
	recoverer graphql.RecoverFunc
}

func (e *Executor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	ctx = previous.WithLoader(timeline.WithLoader(ctx))
	if data, ok := e.runDirect(ctx, opCtx); ok {
		return graphql.OneShot(&graphql.Response{Data: data}), graphql.WithOperationContext(ctx, opCtx)
	}
	responses, ctx := e.Executor.DispatchOperation(ctx, opCtx)
	answered := false
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if res == nil && !answered {
			if expired, ok := apperr.Expired(ctx); ok {
				res = e.DispatchError(ctx, gqlerror.List{gqlerror.WrapPath(nil, expired)})
			}
		}
		answered = true
		return res
	}, ctx
}

// runDirect answers a query on the direct executor, or reports that gqlgen's
// must.
func (e *Executor) runDirect(ctx context.Context, opCtx *graphql.OperationContext) (data []byte, ok bool) {
	if opCtx.Operation.Operation != ast.Query || introspects(opCtx) {
		return nil, false
	}
	ctx = graphql.WithResponseContext(graphql.WithOperationContext(ctx, opCtx), e.presenter, e.recoverer)
	defer func() {
		if recover() != nil {
			ok = false // gqlgen's run panics the same way, and reports it
		}
	}()
	data, err := direct.Answer(func(w *direct.Writer) error { return e.schema.execDirect(ctx, w) })
	if err != nil || len(graphql.GetErrors(ctx)) > 0 {
		return nil, false
	}
	return data, true
}

// introspects reports whether a query asks for the schema, which only
// gqlgen's executor answers.
func introspects(opCtx *graphql.OperationContext) bool {
	for _, f := range graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Query"}) {
		if f.Name == "__schema" || f.Name == "__type" {
			return true
		}
	}
	return false
}

// presentError shows a client only errors meant for clients: the service's
// own (*apperr.Error), gqlgen's parse, validation and complexity errors and
// entgql's not-found, which carry a code, and ent's not-found. Anything else
// may hold SQL or driver text, so it is logged and shown as "internal error".
// presentError is presentErrorOf with the request's id in every error's
// extensions (requestId), the thread from a user's report to the log lines.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	present := presentErrorOf(log)
	return func(ctx context.Context, err error) *gqlerror.Error {
		out := present(ctx, err)
		metrics.From(ctx).GraphQLError(string(codeOf(out)))
		if id := requestid.From(ctx); id != "" {
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions["requestId"] = id
		}
		return out
	}
}

// codeOf is err's extensions.code: an apperr.Code from our presenter, a
// string from gqlgen's and entgql's own errors, "" when it has none.
func codeOf(err *gqlerror.Error) apperr.Code {
	switch code := err.Extensions["code"].(type) {
	case apperr.Code:
		return code
	case string:
		return apperr.Code(code)
	}
	return ""
}

func presentErrorOf(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var (
			appErr *apperr.Error
			gqlErr *gqlerror.Error
		)
		switch {
		case errors.As(err, &appErr):
			if appErr.Code == apperr.Unavailable {
				// Not the request's fault nor a bug, but an outage or an
				// overload someone should see, with what the database said.
				log.WarnContext(ctx, "graphql: database unavailable", "path", graphql.GetPath(ctx).String(), "err", appErr.Message, "cause", appErr.Cause)
			}
		case errors.As(err, &gqlErr) && (gqlErr.Err == nil || gqlErr.Extensions["code"] != nil):
			return gqlErr // gqlgen's or entgql's own, about the request
		case ent.IsNotFound(err):
			appErr = &apperr.Error{Code: apperr.NotFound, Message: "not found"}
		default:
			var expired bool
			if appErr, expired = apperr.Expired(ctx); expired {
				log.InfoContext(ctx, "graphql: request ended before its answer", "path", graphql.GetPath(ctx).String(), "code", appErr.Code, "err", err)
				break
			}
			log.ErrorContext(ctx, "graphql: internal error", "path", graphql.GetPath(ctx).String(), "err", err)
			appErr, _ = apperr.Public(err)
		}
		out := gqlerror.WrapPath(graphql.GetPath(ctx), appErr)
		out.Message = appErr.Error()
		out.Extensions = map[string]any{"code": appErr.Code}
		if appErr.Field != "" {
			out.Extensions["field"] = appErr.Field
		}
		return out
	}
}

func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "graphql: panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return errors.New("panic") // shown to the client as "internal error"
	}
}

// listSpans gives each resolver of a list field its trace span, when gqlgen's
// executor runs the operation.
type listSpans struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = listSpans{}

func (listSpans) ExtensionName() string                   { return "ListSpans" }
func (listSpans) Validate(graphql.ExecutableSchema) error { return nil }

func (listSpans) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !(fc.IsResolver || fc.IsMethod) || !direct.ReturnsList(fc.Field.Definition) {
		return next(ctx)
	}
	ctx, end := tracing.Resolver(ctx, fc.Object, fc.Field.Name)
	defer end()
	return next(ctx)
}

// noteLoads notes the properties and inventories each operation loads, so
// that their timelines and predecessors, if asked for, are read together
// (internal/timeline, internal/previous).
func noteLoads(client *ent.Client) {
	client.Inventory.Intercept(noting(previous.Seen))
	client.Property.Intercept(noting(timeline.Seen))
}

// noting is an interceptor that hands the rows a query returns to note.
func noting[T any](note func(context.Context, []T)) ent.Interceptor {
	return ent.InterceptFunc(func(next ent.Querier) ent.Querier {
		return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
			v, err := next.Query(ctx, q)
			if rows, ok := v.([]T); ok {
				note(ctx, rows)
			}
			return v, err
		})
	})
}
