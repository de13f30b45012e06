package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/metrics"
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

// TestEveryTransportMakesOneOperationSpanAndMetric: an operation is one span
// ("graphql <name>") and one observation of the per-operation metric
// whatever brings it: JSON POST, GET, multipart, @defer, SSE, a WebSocket,
// and REST's in-process calls. Only JSON POST made them before.
func TestEveryTransportMakesOneOperationSpanAndMetric(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)))
	t.Cleanup(func() { tracing.Use(noop.NewTracerProvider()) })
	instruments := metrics.New()
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Tracing: true, Metrics: instruments})
	header := http.Header{"X-Company-Id": {company}}
	query := func(name string) string { return "query " + name + " { inventories(first: 1) { totalCount } }" }
	post := func(name, accept string) {
		body, _ := json.Marshal(map[string]string{"query": query(name)})
		h := header.Clone()
		h.Set("Accept", accept)
		if status, _, got := request(t, http.MethodPost, one.srv.URL+"/graphql", h, body); status != http.StatusOK {
			t.Errorf("%s: %d %.200s", name, status, got)
		}
	}
	post("ViaPost", "application/json")
	if status, _, got := request(t, http.MethodGet, one.srv.URL+"/graphql?query="+url.QueryEscape(query("ViaGet")), header, nil); status != http.StatusOK {
		t.Errorf("ViaGet: %d %.200s", status, got)
	}
	deferred, _ := json.Marshal(map[string]string{"query": "query ViaDefer { inventories(first: 1) { totalCount ... @defer { edges { node { id } } } } }"})
	h := header.Clone()
	h.Set("Accept", "multipart/mixed")
	if status, _, got := request(t, http.MethodPost, one.srv.URL+"/graphql", h, deferred); status != http.StatusOK {
		t.Errorf("ViaDefer: %d %.200s", status, got)
	}
	post("ViaSSE", "text/event-stream")
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("operations", `{"query":"mutation ViaMultipart($f: Upload!) { addItemPhoto(itemId: \"`+uuid.NewString()+`\", file: $f) { photo { id } } }","variables":{"f":null}}`)
	_ = mw.WriteField("map", `{"0": ["variables.f"]}`)
	part, _ := mw.CreateFormFile("0", "a.jpg")
	_, _ = part.Write([]byte("\xff\xd8\xff\xe0 a photo"))
	_ = mw.Close()
	h = header.Clone()
	h.Set("Content-Type", mw.FormDataContentType())
	h.Set("Apollo-Require-Preflight", "true")
	if status, _, got := request(t, http.MethodPost, one.srv.URL+"/graphql", h, form.Bytes()); status != http.StatusOK {
		t.Errorf("ViaMultipart: %d %.300s", status, got)
	}
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := c.operation("1", query("ViaWebSocket")); len(errs) > 0 {
		t.Errorf("ViaWebSocket: %+v", errs)
	}
	if status, _, got := request(t, http.MethodGet, one.srv.URL+"/api/v1/inventories", header, nil); status != http.StatusOK {
		t.Errorf("REST B1: %d %.200s", status, got)
	}

	_, _, body := request(t, http.MethodGet, one.srv.URL+"/metrics", nil, nil)
	for _, name := range []string{"ViaPost", "ViaGet", "ViaDefer", "ViaSSE", "ViaMultipart", "ViaWebSocket", "B1Inventories"} {
		n := 0
		for _, s := range spans.GetSpans().Snapshots() {
			if s.Name() == "graphql "+name {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d operation spans, want 1", name, n)
		}
		if !strings.Contains(string(body), `inventory_graphql_operation_duration_seconds_count{operation="`+name+`"} 1`) {
			t.Errorf("%s: no observation of the operation metric in /metrics", name)
		}
	}
}
