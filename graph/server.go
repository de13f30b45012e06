package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/paging"
)

// ComplexityLimit bounds the work of one operation. Every field costs 1, and a
// list of inventories or properties multiplies its selection by its page size,
// so the full nested tree of a 100-row page fits, and alias or depth bombs do not.
const ComplexityLimit = 5000

// NewServer is the GraphQL HTTP handler, built explicitly instead of with
// gqlgen's NewDefaultServer: GET and POST only, a bounded parsed-query cache,
// a complexity limit, errors in the service's vocabulary and panics recovered.
func NewServer(client *ent.Client, nodes NodeLocator, log *slog.Logger) *handler.Server {
	cfg := Config{Resolvers: &Resolver{client: client, nodes: nodes}}
	cfg.Complexity.Query.Inventories = func(child int, _ *entgql.Cursor[uuid.UUID], first *int, _ *entgql.Cursor[uuid.UUID], last *int, _ *ent.InventoryOrder, _ *ent.InventoryWhereInput) int {
		return child * connectionSize(first, last)
	}
	cfg.Complexity.Query.Properties = func(child int, _ *entgql.Cursor[uuid.UUID], first *int, _ *entgql.Cursor[uuid.UUID], last *int, _ *ent.PropertyOrder, _ *ent.PropertyWhereInput) int {
		return child * connectionSize(first, last)
	}
	cfg.Complexity.Query.InventoryPage = func(child, _, pageSize int, _ *ent.InventoryWhereInput, _ *ent.InventoryOrder) int {
		return child * max(pageSize, 1)
	}
	cfg.Complexity.Query.PropertyPage = func(child, _, pageSize int, _ *ent.PropertyWhereInput, _ *ent.PropertyOrder) int {
		return child * max(pageSize, 1)
	}

	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(ComplexityLimit))
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(recoverPanic(log))
	return srv
}

func connectionSize(first, last *int) int {
	switch {
	case first != nil:
		return max(*first, 1)
	case last != nil:
		return max(*last, 1)
	}
	return paging.MaxPageSize // no bound asked: assume the largest page
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
