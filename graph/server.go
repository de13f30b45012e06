package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/graph/querylimits"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/dbtime"
	"github.com/propertyrecords/inventory/internal/direct"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/previous"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/requestid"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/timeline"
	"github.com/propertyrecords/inventory/internal/tracing"
	"github.com/propertyrecords/inventory/internal/treecache"
	"github.com/propertyrecords/inventory/internal/upload"
	"github.com/propertyrecords/inventory/internal/webhooks"
)

// NewExecutor builds the service's one GraphQL executor: /graphql serves it
// over HTTP (graphqlhttp.Handler) and the REST adapter runs its operations on it
// in-process, so both share the parsed-query cache, the limits, the error
// presenter and the recover func.
// ExecutorOptions are the executor's bounds beyond querylimits.Default.
type ExecutorOptions struct {
	// MaxResponseBytes bounds each answer (DefaultMaxResponseBytes when 0,
	// none when negative).
	MaxResponseBytes int
	// Budget, when set, charges each operation's price to its caller.
	Budget *fairshare.Budget
	// Limits replace querylimits.Default when set.
	Limits *querylimits.Limits
	// MaxPhotoBytes bounds a photo addItemPhoto takes
	// (upload.DefaultMaxPhotoBytes when 0).
	MaxPhotoBytes int64
	// Live serves the subscriptions; nil: they are refused.
	Live *live.Hub
	// ReadOnly refuses every write (INVENTORY_WRITES=off).
	ReadOnly bool
	// PDFs make the signed PDFs of the inventories signInventory signs; nil:
	// none are made (A2 has them made on first request).
	PDFs *signedpdf.Renderings
	// EventReadTimeout bounds each read a subscription's event makes
	// (DefaultEventReadTimeout when 0): a subscription has no request
	// deadline, and on SQLite no statement timeout bounds a read either.
	EventReadTimeout time.Duration
	// SigningLinkTTL is how long requestSignature's links last unless asked
	// otherwise (records.DefaultLinkTTL when 0).
	SigningLinkTTL time.Duration
	// Drafts render the document each signature signs, whose SHA-256 it
	// keeps; nil: none is kept.
	Drafts records.Drafts
	// Jobs inserts the durable jobs the writes cause (internal/jobs); nil:
	// none.
	Jobs records.Jobs
	// Webhooks keeps the webhook endpoints and makes the deliveries
	// (internal/webhooks); nil: endpoints are kept, and no delivery is made.
	Webhooks *webhooks.Service
	// TreeCacheBytes bounds the signed inventories' trees kept in memory
	// (internal/treecache); 0 or less: none is kept.
	TreeCacheBytes int64
}

// DefaultEventReadTimeout is the server's default request deadline.
const DefaultEventReadTimeout = 10 * time.Second

func NewExecutor(client *ent.Client, nodes NodeLocator, store *files.Store, log *slog.Logger, opts ExecutorOptions) *Executor {
	maxPhoto := cmp.Or(opts.MaxPhotoBytes, upload.DefaultMaxPhotoBytes)
	hooks := opts.Webhooks
	if hooks == nil && client != nil {
		hooks = webhooks.New(client, nil, webhooks.Options{})
	}
	schema := NewExecutableSchema(Config{Schema: publicSchema(), Resolvers: &Resolver{client: client, nodes: nodes, files: store,
		records: records.NewService(client, nodes, log, pdfMaker(opts.PDFs), store, opts.ReadOnly).WithLinkTTL(opts.SigningLinkTTL).WithDrafts(opts.Drafts).WithJobs(opts.Jobs), maxPhotoBytes: maxPhoto, live: opts.Live, webhooks: hooks,
		eventInventories: live.NewShared[*ent.Inventory](maxSharedReads), eventItems: live.NewShared[*ent.Item](maxSharedReads)}})
	if client != nil { // nil: a schema priced, never run (cost tests)
		noteLoads(client)
	}
	limits := querylimits.Default
	if opts.Limits != nil {
		limits = *opts.Limits
	}
	lists := querylimits.ReadListSizes(schema.Schema())
	queries := querylimits.DefaultsCache{Cache: lru.New[*ast.QueryDocument](1000), Lists: lists}

	exec := executor.New(schema)
	exec.SetQueryCache(queries)
	exec.SetParserTokenLimit(limits.Tokens)
	// The direct executor runs no field, root field, operation or response
	// middleware: an extension that adds one must be served by it too (as
	// listSpans is, by code generated for it).
	exec.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	exec.Use(querylimits.DocumentCheck{Limits: limits, Cache: queries})
	exec.Use(extension.Introspection{})
	exec.Use(querylimits.InputCheck{Limits: limits, Schema: schema.Schema()})
	exec.Use(querylimits.CostCheck{Limit: limits.Cost, Lists: lists, Budget: opts.Budget})
	exec.Use(graphqlhttp.TransportCheck{})
	exec.Use(listSpans{}) // the direct executor's code makes the same spans (graph/gqlgen.go: ListSpan)
	presenter, recoverer := presentError(log), recoverPanic(log)
	exec.SetErrorPresenter(presenter)
	exec.SetRecoverFunc(recoverer)
	exec.Use(answerMeter{})
	exec.Use(eventReads{timeout: cmp.Or(opts.EventReadTimeout, DefaultEventReadTimeout)})
	exec.Use(writtenOnce{})
	maxAnswer := cmp.Or(opts.MaxResponseBytes, DefaultMaxResponseBytes)
	return &Executor{Executor: exec, schema: schema.(*executableSchema), presenter: presenter, recoverer: recoverer,
		maxAnswerBytes: max(maxAnswer, 0), maxPhotoBytes: maxPhoto, trees: treecache.New(schema.Schema(), opts.TreeCacheBytes)}
}

// writtenOnce answers a mutation field that the direct executor ran before
// it gave the operation up (a panic: a bug) from what the write returned,
// rather than write again (direct.Once).
type writtenOnce struct{}

var (
	_ graphql.HandlerExtension = writtenOnce{}
	_ graphql.FieldInterceptor = writtenOnce{}
)

func (writtenOnce) ExtensionName() string                   { return "WrittenOnce" }
func (writtenOnce) Validate(graphql.ExecutableSchema) error { return nil }

func (writtenOnce) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Object == "Mutation" {
		return direct.Once(ctx, fc.Field.Alias, func() (any, error) { return next(ctx) })
	}
	return next(ctx)
}

// eventReads bounds in time each field a subscription's event resolves
// (its inventory, its item, and the fields below them that read on their
// own), all but the subscription's own root field, which lives as long as
// its connection without the request deadline that bounds the reads of
// queries and mutations. Queries on the direct executor run no field
// interceptor; those on gqlgen's pass here at the cost of one comparison.
type eventReads struct{ timeout time.Duration }

var (
	_ graphql.HandlerExtension = eventReads{}
	_ graphql.FieldInterceptor = eventReads{}
)

func (eventReads) ExtensionName() string                   { return "EventReads" }
func (eventReads) Validate(graphql.ExecutableSchema) error { return nil }

func (x eventReads) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	op := graphql.GetOperationContext(ctx)
	fc := graphql.GetFieldContext(ctx)
	if op.Operation == nil || op.Operation.Operation != ast.Subscription || fc == nil || fc.Object == "Subscription" || !fc.IsResolver {
		return next(ctx)
	}
	if _, bounded := ctx.Deadline(); bounded {
		return next(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	return next(ctx)
}

// maxSharedReads is how many reads of events' records subscriptions share
// (live.Shared): those of the events in flight.
const maxSharedReads = 256

// pdfMaker makes the PDFs of the inventories signInventory signs; without
// renderings there is none (nil, not a nil *Renderings in the interface).
func pdfMaker(r *signedpdf.Renderings) records.PDFMaker {
	if r == nil {
		return nil
	}
	return r
}

// DefaultMaxResponseBytes bounds what one operation may answer
// (INVENTORY_MAX_RESPONSE_BYTES): far above any tree the price admits with
// real records (20 whole inventories of the largest size an import accepts
// are about 9 MB), low enough that the server's pool of requests in flight
// fits in memory.
const DefaultMaxResponseBytes = 32 << 20

// Executor runs the service's operations. Queries run on the direct executor
// (see internal/direct), which answers their errors as gqlgen's does; the
// rest on gqlgen's. And it answers every operation, even one whose request ran past its
// deadline (gqlgen's answers nothing then).
type Executor struct {
	*executor.Executor
	schema    *executableSchema
	presenter graphql.ErrorPresenterFunc
	recoverer graphql.RecoverFunc
	// maxAnswerBytes bounds each answer's data (0: no bound).
	maxAnswerBytes int
	// maxPhotoBytes bounds a photo; a multipart request may be that and
	// graphqlhttp.MaxRequestBytes more.
	maxPhotoBytes int64
	// trees keeps signed inventories' trees (nil: none).
	trees *treecache.Cache
}

// TreeCache is the executor's cache of signed trees (nil: none).
func (e *Executor) TreeCache() *treecache.Cache { return e.trees }

// DispatchOperation runs an operation, whatever brought it (POST, GET,
// multipart, @defer, SSE, a WebSocket, REST's in-process calls), as one
// span and, but for a subscription's life, one observation of the
// per-operation metric: both are made here, once.
func (e *Executor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	start := opCtx.Stats.OperationStart
	if start.IsZero() {
		start = time.Now()
	}
	ctx, span := tracing.Operation(ctx, opCtx.Operation.Name)
	responses, ctx := e.dispatch(ctx, opCtx)
	var once sync.Once
	done := func(ctx context.Context) {
		once.Do(func() {
			span.End()
			if opCtx.Operation.Operation != ast.Subscription {
				metrics.From(ctx).Operation(opCtx.Operation.Name, time.Since(start))
			}
		})
	}
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if res == nil || res.HasNext == nil && opCtx.Operation.Operation != ast.Subscription || res.HasNext != nil && !*res.HasNext {
			done(ctx)
		}
		return res
	}, ctx
}

func (e *Executor) dispatch(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	subscription := opCtx.Operation.Operation == ast.Subscription
	if !subscription { // a subscription's loaders are its events' (below): each reads the records as they are then
		ctx = withLoaders(ctx)
	}
	cost := costExtensions(opCtx)
	switch opCtx.Operation.Operation {
	case ast.Query:
		ctx = dbtime.With(ctx, databaseTime(opCtx))
	case ast.Mutation:
		// Should the direct executor give a mutation up after its write,
		// gqlgen's answers it from what the write returned (writtenOnce).
		ctx = direct.WithOnce(ctx)
	}
	data, errs, err := e.runDirect(ctx, opCtx)
	switch unavailable := (*unavailableError)(nil); {
	case err == nil:
		return graphql.OneShot(&graphql.Response{Data: data, Errors: errs, Extensions: cost}), graphql.WithOperationContext(ctx, opCtx)
	case err == direct.ErrTooLarge:
		ctx = graphql.WithOperationContext(ctx, opCtx)
		res := e.tooLarge(ctx)
		res.Extensions = cost
		return graphql.OneShot(res), ctx
	case errors.As(err, &unavailable):
		// Run again, it would wait for the database as long again, only to
		// be refused: the client is told at once to send it later.
		ctx = graphql.WithOperationContext(ctx, opCtx)
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{e.presenter(ctx, unavailable.err)}, Extensions: cost}), ctx
	}
	meter := &answerBytes{limit: int64(e.maxAnswerBytes)}
	responses, ctx := e.Executor.DispatchOperation(withAnswerBytes(ctx, meter), opCtx)
	answered := false
	return func(ctx context.Context) *graphql.Response {
		if subscription {
			ctx = withLoaders(ctx)
		}
		res := responses(ctx)
		if res == nil && !answered {
			if expired, ok := apperr.Expired(ctx); ok {
				res = e.DispatchError(ctx, gqlerror.List{gqlerror.WrapPath(nil, expired)})
			}
		}
		if res != nil && meter.over.Load() {
			res = e.tooLarge(ctx) // what was answered before the limit is dropped whole
		}
		if subscription {
			meter.reset() // each event is an answer of its own
		}
		if res != nil && !answered && cost != nil {
			if res.Extensions == nil {
				res.Extensions = cost
			} else {
				maps.Copy(res.Extensions, cost)
			}
		}
		answered, cost = true, nil // reported once: a subscription holds it no longer
		return res
	}, ctx
}

// The database time a query may take in all (internal/dbtime): from
// minDatabaseTime for the cheapest to maxDatabaseTime at the price limit,
// in proportion to its price. The floor is generous: a count over a large
// company's repairs is dear but honest. The price bounds what a document may ask
// for; this bounds what the database then does for it, whatever the price
// missed (a filter no index serves over a million rows).
const (
	minDatabaseTime = 500 * time.Millisecond
	maxDatabaseTime = time.Second
)

// databaseTime is the database time of the query opCtx, by its price.
func databaseTime(opCtx *graphql.OperationContext) time.Duration {
	report, ok := opCtx.Stats.GetExtension(querylimits.CostStat).(*querylimits.CostReport)
	if !ok || report.MaximumQueryCost <= 0 {
		return maxDatabaseTime
	}
	share := min(float64(report.RequestedQueryCost)/float64(report.MaximumQueryCost), 1)
	return minDatabaseTime + time.Duration(share*float64(maxDatabaseTime-minDatabaseTime))
}

// withLoaders gives ctx the loaders that read a field for every record of
// an answer at once (Property.timeline, Inventory.previous).
func withLoaders(ctx context.Context) context.Context {
	return previous.WithLoader(timeline.WithLoader(ctx))
}

// costExtensions are the extensions that report opCtx's cost, nil when it
// was not priced.
func costExtensions(opCtx *graphql.OperationContext) map[string]any {
	if report, ok := opCtx.Stats.GetExtension(querylimits.CostStat).(*querylimits.CostReport); ok {
		return map[string]any{querylimits.CostStat: report}
	}
	return nil
}

// tooLarge is the answer to an operation whose answer passed its limit: no
// data (a part of a list would read as the whole of it), and one error.
func (e *Executor) tooLarge(ctx context.Context) *graphql.Response {
	err := &gqlerror.Error{
		Message:    fmt.Sprintf("the answer is over %d bytes, the most one request may answer: ask for fewer records or fields, or page through them", e.maxAnswerBytes),
		Extensions: map[string]any{"code": apperr.ResponseTooLarge, "limit": e.maxAnswerBytes},
		Err:        &apperr.Error{Code: apperr.ResponseTooLarge, Message: "the answer is over its size limit"},
	}
	if id := requestid.From(ctx); id != "" {
		err.Extensions["requestId"] = id
	}
	metrics.From(ctx).GraphQLError(string(apperr.ResponseTooLarge))
	return &graphql.Response{Errors: gqlerror.List{err}}
}

// errFallback: the operation is gqlgen's executor's to answer.
var errFallback = errors.New("graph: run on gqlgen's executor")

// unavailableError: the direct executor stopped because the database could
// not answer (err, an apperr.Unavailable).
type unavailableError struct{ err error }

func (u *unavailableError) Error() string { return u.err.Error() }

// runDirect answers a query or a mutation on the direct executor: its data
// and errors (partial data included, as gqlgen's executor answers them),
// ErrTooLarge past the answer's limit, an *unavailableError when the
// database could not answer, or errFallback when gqlgen's executor must
// answer instead. The executor is chosen before running (queries and
// mutations, but introspection and @defer), and an operation runs once,
// errors included; only a panic (a bug) runs it again on gqlgen's, which
// reports it, and answers a mutation's writes from what they returned
// rather than write again (direct.Once).
func (e *Executor) runDirect(ctx context.Context, opCtx *graphql.OperationContext) (data []byte, errs gqlerror.List, err error) {
	if op := opCtx.Operation.Operation; op != ast.Query && op != ast.Mutation || introspects(opCtx) || graphqlhttp.Defers(opCtx.Operation) {
		return nil, nil, errFallback
	}
	ctx = graphql.WithResponseContext(graphql.WithOperationContext(ctx, opCtx), e.presenter, e.recoverer)
	ctx = e.trees.Begin(ctx, opCtx)
	defer func() {
		if recover() != nil {
			data, errs, err = nil, nil, errFallback
		}
	}()
	data, err = direct.Answer(e.maxAnswerBytes, func(w *direct.Writer) error {
		return e.schema.execDirect(ctx, w)
	})
	switch {
	case err == direct.ErrTooLarge:
		return nil, nil, err
	case err != nil && apperr.CodeOf(err) == apperr.Unavailable:
		return nil, nil, &unavailableError{err: err}
	case err == direct.ErrNull:
		data, err = []byte("null"), nil
	case err != nil:
		return nil, nil, errFallback
	}
	return data, graphql.GetErrors(ctx), nil
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
		if !firstReport(ctx, err) {
			return nil // gqlgen's executor drops it
		}
		out := present(ctx, err)
		out.Message = apperr.Cut(out.Message)
		if graphqlhttp.CodeOf(out) == "" {
			// A refusal of gqlgen's transports (a GET without a query, a
			// body that is no JSON): about the request, and coded as ours.
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions["code"] = graphqlhttp.BadRequest
		}
		metrics.From(ctx).GraphQLError(string(graphqlhttp.CodeOf(out)))
		if id := requestid.From(ctx); id != "" {
			if out.Extensions == nil {
				out.Extensions = map[string]any{}
			}
			out.Extensions["requestId"] = id
		}
		return out
	}
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
				// overload someone should see, with what the database or the
				// blob store said.
				log.WarnContext(ctx, "graphql: unavailable", "path", graphql.GetPath(ctx).String(), "err", appErr.Message, "cause", appErr.Cause)
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
			if errors.Is(err, context.DeadlineExceeded) {
				// A statement's own deadline (its database time, internal/dbtime)
				// that reached here unnamed, from the rows as they were read: a
				// bound that held, not a bug.
				appErr = &apperr.Error{Code: apperr.DeadlineExceeded, Cause: err,
					Message: "the operation ran out of the database time its price allows, and was stopped: ask for fewer records, smaller lists or simpler filters"}
				log.InfoContext(ctx, "graphql: a statement ran out of its time", "path", graphql.GetPath(ctx).String(), "err", err)
				break
			}
			log.ErrorContext(ctx, "graphql: internal error", "path", graphql.GetPath(ctx).String(), "err", err)
			appErr, _ = apperr.Public(err)
		}
		if appErr.Field == "" {
			if field := inputField(ctx, err); field != "" {
				named := *appErr
				named.Field = field
				appErr = &named
			}
		}
		out := gqlerror.WrapPath(graphql.GetPath(ctx), appErr)
		out.Message = appErr.Error()
		out.Extensions = map[string]any{"code": appErr.Code}
		if appErr.Field != "" {
			out.Extensions["field"] = appErr.Field
		}
		if errors.As(err, &gqlErr) {
			for k, v := range gqlErr.Extensions { // what our extensions added (a budget's cost, when to retry)
				if _, set := out.Extensions[k]; !set {
					out.Extensions[k] = v
				}
			}
		}
		return out
	}
}

// inputField names the field of a mutation's input that a scalar refused
// (an ID that is not a UUID, text that is not a decimal), as internal/records
// names the fields it refuses: relative to the input,
// environments[1].items[0].materialId. gqlgen gives such an error the path
// of the field being parsed after the response's path; "" when there is none.
func inputField(ctx context.Context, err error) string {
	fc := graphql.GetFieldContext(ctx)
	gqlErr, ok := errors.AsType[*gqlerror.Error](err)
	if fc == nil || fc.Object != "Mutation" || !ok {
		return ""
	}
	at := len(graphql.GetPath(ctx))
	if len(gqlErr.Path) <= at+1 || gqlErr.Path[at] != ast.PathName("input") {
		return ""
	}
	var b strings.Builder
	for _, el := range gqlErr.Path[at+1:] {
		switch el := el.(type) {
		case ast.PathName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(el))
		case ast.PathIndex:
			fmt.Fprintf(&b, "[%d]", int(el))
		}
	}
	return b.String()
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
