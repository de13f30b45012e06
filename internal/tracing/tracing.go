// Package tracing is the service's OpenTelemetry tracing: a span per HTTP
// request (otelhttp), per GraphQL operation, and per SQL statement, exported
// over OTLP/HTTP as the standard OTEL_* environment variables configure.
// Unless OTEL_TRACES_EXPORTER is "otlp", nothing is set up: the global
// tracer provider stays OpenTelemetry's no-op, and nothing dials out.
package tracing

import (
	"context"
	"fmt"
	"net/http"

	"entgo.io/ent/dialect"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// name is the instrumentation scope of the service's own spans.
const name = "github.com/propertyrecords/inventory"

// Setup installs an OTLP/HTTP exporter when OTEL_TRACES_EXPORTER is "otlp"
// (its endpoint, headers and sampler from the other OTEL_* variables), and
// returns whether it did and a function that flushes and stops it. Any other
// value but "none" or unset is an error, so that a typo does not silently
// drop traces.
func Setup(ctx context.Context, getenv func(string) string) (enabled bool, shutdown func(context.Context) error, err error) {
	switch exporter := getenv("OTEL_TRACES_EXPORTER"); exporter {
	case "", "none":
		return false, func(context.Context) error { return nil }, nil
	case "otlp":
		if p := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p == "grpc" || p == "" && getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc" {
			return false, nil, fmt.Errorf("tracing: OTLP over gRPC is not built in: use http/protobuf (the default)")
		}
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return false, nil, fmt.Errorf("tracing: %w", err)
		}
		Use(sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp)))
		return true, otel.GetTracerProvider().(*sdktrace.TracerProvider).Shutdown, nil
	default:
		return false, nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: this build exports otlp (http/protobuf) or none", exporter)
	}
}

// Use makes tp the global tracer provider, with W3C trace context
// propagation (a caller's traceparent header continues its trace).
func Use(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

// Handler wraps the server's handler in a span per request, named by route.
func Handler(next http.Handler, route func(*http.Request) string) http.Handler {
	return otelhttp.NewHandler(next, "http", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return r.Method + " " + route(r)
	}))
}

// Operation starts the span of a GraphQL operation.
func Operation(ctx context.Context, operation string) (context.Context, trace.Span) {
	if operation == "" {
		operation = "anonymous"
	}
	return otel.Tracer(name).Start(ctx, "graphql "+operation, trace.WithAttributes(attribute.String("graphql.operation.name", operation)))
}

// Driver wraps an ent driver so that each statement is a span.
func Driver(d dialect.Driver) dialect.Driver { return driver{d} }

type driver struct{ dialect.Driver }

func (d driver) Exec(ctx context.Context, query string, args, v any) error {
	return traced(ctx, query, func(ctx context.Context) error { return d.Driver.Exec(ctx, query, args, v) })
}

func (d driver) Query(ctx context.Context, query string, args, v any) error {
	return traced(ctx, query, func(ctx context.Context) error { return d.Driver.Query(ctx, query, args, v) })
}

func (d driver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return txDriver{tx}, nil
}

type txDriver struct{ dialect.Tx }

// Unwrap is the transaction it wraps, for (*ent.Tx).SQLTx: River inserts
// a job in the *sql.Tx underneath.
func (t txDriver) Unwrap() dialect.Tx { return t.Tx }

func (t txDriver) Exec(ctx context.Context, query string, args, v any) error {
	return traced(ctx, query, func(ctx context.Context) error { return t.Tx.Exec(ctx, query, args, v) })
}

func (t txDriver) Query(ctx context.Context, query string, args, v any) error {
	return traced(ctx, query, func(ctx context.Context) error { return t.Tx.Query(ctx, query, args, v) })
}

// traced runs a statement inside its span.
func traced(ctx context.Context, query string, run func(context.Context) error) error {
	ctx, span := statement(ctx, query)
	err := run(ctx)
	end(span, err)
	return err
}

// statement starts a statement's span; the text is the query with its
// placeholders, never its arguments (they are the companies' records).
func statement(ctx context.Context, query string) (context.Context, trace.Span) {
	return otel.Tracer(name).Start(ctx, "sql", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.query.text", query)))
}

func end(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// noEnd ends no span: what Resolver returns outside a recorded trace.
func noEnd() {}

// Resolver starts the span of the resolver of a list field (object.field,
// "Query.properties"), whose statements become its children, and returns
// the context to call it with and the function that ends the span. Outside
// a sampled trace it starts nothing and allocates nothing: nested lists
// resolve once per parent element, on the service's hottest path.
func Resolver(ctx context.Context, object, field string) (context.Context, func()) {
	// Sampled, not recording: on gqlgen's executor a nested list's context
	// descends from its parent list's span, which has ended by then.
	if !trace.SpanFromContext(ctx).SpanContext().IsSampled() {
		return ctx, noEnd
	}
	ctx, span := otel.Tracer(name).Start(ctx, object+"."+field,
		trace.WithAttributes(attribute.String("graphql.field.path", object+"."+field)))
	return ctx, func() { span.End() }
}
