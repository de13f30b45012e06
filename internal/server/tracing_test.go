package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/tracing"
)

// A nested GraphQL request is one trace: the HTTP request's span, the
// operation's inside it, a span per list resolver inside that (the root
// field's, and each nested list's), and each SQL statement's inside the
// resolver that sent it; on the direct executor and on gqlgen's alike.
func TestANestedRequestIsOneTraceOfHTTPGraphQLResolverAndSQLSpans(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)))
	t.Cleanup(func() { tracing.Use(noop.NewTracerProvider()) })

	st := testdb.Open(t, store.WithDriver(tracing.Driver))
	if _, err := datagen.Load(tenant.Unrestricted(context.Background(), "test: demo data"), st.Client, nil, datagen.DemoSeed, smallDataset); err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Tracing: true})
	for executor, query := range map[string]string{
		"direct": ide.ExampleQuery,
		// Introspection is gqlgen's executor's alone.
		"gqlgen": strings.Replace(ide.ExampleQuery, "query NestedInventories {", "query NestedInventories {\n  __type(name: \"Property\") { name }", 1),
	} {
		t.Run(executor, func(t *testing.T) {
			spans.Reset()
			body, _ := json.Marshal(map[string]string{"query": query})
			if status, _, got := request(t, http.MethodPost, srv.URL+"/graphql", http.Header{"X-Company-Id": {company}}, body); status != http.StatusOK || strings.Contains(string(got), `"errors"`) {
				t.Fatalf("the example query: %d %.300s", status, got)
			}
			byName := map[string][]sdktrace.ReadOnlySpan{}
			for _, s := range spans.GetSpans().Snapshots() {
				byName[strings.Fields(s.Name())[0]] = append(byName[strings.Fields(s.Name())[0]], s)
			}
			root, operation, statements, inventories := byName["POST"], byName["graphql"], byName["sql"], byName["Query.inventories"]
			if len(root) != 1 || root[0].Name() != "POST /graphql" || len(operation) != 1 || len(statements) < 5 || len(inventories) != 1 {
				t.Fatalf("spans: %d HTTP %v, %d operation, %d Query.inventories, %d SQL: want one POST /graphql, one operation, one root list resolver and its statements",
					len(root), names(root), len(operation), len(inventories), len(statements))
			}
			traceID := root[0].SpanContext().TraceID()
			if operation[0].Parent().SpanID() != root[0].SpanContext().SpanID() {
				t.Errorf("the operation's span is not inside the request's")
			}
			if inventories[0].Parent().SpanID() != operation[0].SpanContext().SpanID() {
				t.Errorf("the root list resolver's span is not inside the operation's")
			}
			// Each inventory's environments, each environment's items: a
			// span per resolver call, three inventories and their rooms.
			for _, nested := range []string{"Inventory.environments", "Environment.items"} {
				if n := len(byName[nested]); n < 3 {
					t.Errorf("%d %s spans, want one per parent (at least 3)", n, nested)
				}
			}
			resolvers := map[trace.SpanID]bool{}
			for name, group := range byName {
				if strings.Contains(name, ".") {
					for _, s := range group {
						resolvers[s.SpanContext().SpanID()] = true
					}
				}
			}
			for _, s := range statements {
				if s.SpanContext().TraceID() != traceID || !resolvers[s.Parent().SpanID()] {
					t.Errorf("statement %q is not inside a resolver's span", s.Attributes())
				}
				for _, a := range s.Attributes() {
					if strings.Contains(a.Value.Emit(), company) {
						t.Errorf("a statement's span holds an argument (the company): %v", a)
					}
				}
			}
		})
	}
}

// Unless OTEL_TRACES_EXPORTER asks for OTLP, nothing is set up: the global
// provider stays the no-op one, so no span is recorded and nothing dials out.
func TestTracingIsOffUnlessAnExporterIsConfigured(t *testing.T) {
	before := otel.GetTracerProvider()
	for _, value := range []string{"", "none"} {
		enabled, stop, err := tracing.Setup(context.Background(), func(k string) string {
			return map[string]string{"OTEL_TRACES_EXPORTER": value}[k]
		})
		if err != nil || enabled || otel.GetTracerProvider() != before {
			t.Errorf("OTEL_TRACES_EXPORTER=%q: enabled %v, err %v, provider changed %v", value, enabled, err, otel.GetTracerProvider() != before)
		}
		_ = stop(context.Background())
	}
	if _, _, err := tracing.Setup(context.Background(), func(k string) string {
		return map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}[k]
	}); err == nil {
		t.Errorf("an exporter this build lacks: want an error, not traces silently dropped")
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
