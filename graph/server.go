package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
)

// NewExecutor builds the service's one GraphQL executor: /graphql serves it
// over HTTP (Handler) and the REST adapter runs its operations on it
// in-process, so both share the parsed-query cache, the limits, the error
// presenter and the recover func.
func NewExecutor(client *ent.Client, nodes NodeLocator, store *files.Store, log *slog.Logger) *executor.Executor {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{client: client, nodes: nodes, files: store}})
	limits := DefaultLimits
	lists := readListSizes(schema.Schema())
	queries := defaultsCache{Cache: lru.New[*ast.QueryDocument](1000), lists: lists}

	exec := executor.New(schema)
	exec.SetQueryCache(queries)
	exec.SetParserTokenLimit(limits.Tokens)
	exec.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	exec.Use(limitsExtension{limits: limits, cache: queries})
	exec.Use(extension.Introspection{})
	exec.Use(costExtension{limit: limits.Cost, lists: lists})
	exec.SetErrorPresenter(presentError(log))
	exec.SetRecoverFunc(recoverPanic(log))
	return exec
}

// MaxRequestBytes bounds a request body: operations are small, and a client
// must not make the server hold an unbounded body in memory.
const MaxRequestBytes = 1 << 20

// transports are the ways /graphql accepts operations: GET and POST, as
// GraphQL over HTTP asks, and OPTIONS for CORS preflights.
var transports = []graphql.Transport{transport.Options{}, transport.GET{}, transport.POST{}}

// Handler serves exec over HTTP. It does what gqlgen's handler.Server does,
// which cannot be given an executor of our own to share with REST.
func Handler(exec *executor.Executor) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				writeGraphQLError(w, http.StatusInternalServerError, exec.PresentRecoveredError(r.Context(), p))
			}
		}()
		r = r.WithContext(graphql.StartOperationTrace(r.Context()))
		if r.ContentLength > MaxRequestBytes {
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, gqlerror.Errorf("the request body is over %d bytes", MaxRequestBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes) // bodies of unknown length too
		for _, t := range transports {
			if t.Supports(r) {
				t.Do(w, r, exec)
				return
			}
		}
		writeGraphQLError(w, http.StatusBadRequest, gqlerror.Errorf("send operations with GET or POST (application/json)"))
	})
}

func writeGraphQLError(w http.ResponseWriter, status int, err error) {
	gqlErr, ok := err.(*gqlerror.Error)
	if !ok {
		gqlErr = gqlerror.Errorf("internal error")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(&graphql.Response{Errors: gqlerror.List{gqlErr}})
}

// presentError shows a client only errors meant for clients: the service's
// own (*apperr.Error), gqlgen's parse, validation and complexity errors and
// entgql's not-found, which carry a code, and ent's not-found. Anything else
// may hold SQL or driver text, so it is logged and shown as "internal error".
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var (
			appErr *apperr.Error
			gqlErr *gqlerror.Error
		)
		switch {
		case errors.As(err, &appErr):
		case errors.As(err, &gqlErr) && (gqlErr.Err == nil || gqlErr.Extensions["code"] != nil):
			return gqlErr // gqlgen's or entgql's own, about the request
		case ent.IsNotFound(err):
			appErr = &apperr.Error{Code: apperr.NotFound, Message: "not found"}
		default:
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
