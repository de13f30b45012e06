package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A browser app on another origin can call GraphQL and REST: its preflight
// (a POST with X-Company-Id is not a simple request) is answered, and the
// answers name the origins allowed and the headers the app may read. The
// origins are a setting: by default any, since the API takes no cookies.
func TestBrowsersOnAllowedOriginsCanCallTheAPI(t *testing.T) {
	st := testdb.Open(t)
	serve := func(origins []string) *apitest.Server {
		return apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), CORSOrigins: origins})
	}
	preflight := func(srv *apitest.Server, origin string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodOptions, srv.URL+"/graphql", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-company-id")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	get := func(srv *apitest.Server, origin string) *http.Response {
		t.Helper()
		res, _ := srv.Get(t, "/api/v1/inventories?x-company-id="+company, http.Header{"Origin": {origin}})
		return res
	}

	anyOrigin := serve(nil)
	res := preflight(anyOrigin, "https://app.example.com")
	if res.StatusCode >= 300 || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "x-company-id") ||
		res.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight by default: got %d %v, want 2xx allowing any origin, X-Company-Id, no credentials", res.StatusCode, res.Header)
	}
	res = get(anyOrigin, "https://app.example.com")
	if res.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("B1 from another origin: got %v, want it allowed and Retry-After exposed", res.Header)
	}

	// What browser clients add by themselves: OpenTelemetry's trace context
	// and Apollo Client's headers. Each beside Content-Type, listed as
	// browsers list them (lower case, sorted: the Fetch standard).
	for _, header := range []string{"traceparent", "tracestate", "baggage", "apollographql-client-name",
		"apollographql-client-version", "apollo-require-preflight", "x-apollo-operation-name"} {
		req, _ := http.NewRequest(http.MethodOptions, anyOrigin.URL+"/graphql", nil)
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Access-Control-Request-Method", "POST")
		asked := []string{"content-type", header}
		slices.Sort(asked)
		req.Header.Set("Access-Control-Request-Headers", strings.Join(asked, ","))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if !strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), header) {
			t.Errorf("preflight asking for %s: got %d %v, want it allowed", header, res.StatusCode, res.Header)
		}
	}

	listed := serve([]string{"https://app.example.com"})
	if res := preflight(listed, "https://app.example.com"); res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("preflight from a listed origin: got %v, want it allowed", res.Header)
	}
	if res := get(listed, "https://evil.example.com"); res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("B1 from an origin not listed: got %v, want no Access-Control-Allow-Origin", res.Header)
	}

	if res := get(serve([]string{"none"}), "https://app.example.com"); res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off: got %v, want no CORS headers", res.Header)
	}
}
