package graph_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/graph/graphqlhttp"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/rest"
)

// rawPost sends head (the request line and headers) and then body on a
// connection of its own, half-closing it after the body when closeWrite is
// set, and reads the answer.
func rawPost(t *testing.T, addr, head, body string, closeWrite bool) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	if closeWrite {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(raw)
}

// graphQLErrors decodes a body that must be a GraphQL response of errors only.
func graphQLErrors(t *testing.T, body string) []apitest.Error {
	t.Helper()
	var out apitest.Response
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Errors) == 0 {
		t.Fatalf("want a GraphQL response with errors, got %q (%v)", body, err)
	}
	return out.Errors
}

// TestBodiesNotReceivedAreClientErrors: a body that stops coming is the
// client's failure, told as such (408 when the server's read timeout passed,
// 400 when the client stopped sending) and without the network error, whose
// text names the connection's addresses. It was a 200 with that text.
func TestBodiesNotReceivedAreClientErrors(t *testing.T) {
	st := testdb.Open(t)
	logs := &apitest.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	serve := func(opts server.Options, readTimeout time.Duration) string {
		opts.RESTBaseURL, opts.Files = rest.DefaultBaseURL, apitest.Files(t)
		hs := httptest.NewUnstartedServer(server.Handler(st, log, opts))
		hs.Config.ReadTimeout = readTimeout
		hs.Start()
		t.Cleanup(hs.Close)
		return hs.Listener.Addr().String()
	}
	// The server's read timeout, or the request's own deadline (with no
	// read timeout at all), whichever passes first, ends the wait.
	readTimeout := serve(server.Options{}, 200*time.Millisecond)
	requestDeadline := serve(server.Options{RequestTimeout: 300 * time.Millisecond}, 0)
	head := "POST /graphql HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\nX-Company-Id: " + companyA + "\r\n"
	firstTen := `{"query": `

	for _, tt := range []struct {
		name       string
		addr       string
		closeWrite bool
		status     int
		message    string
	}{
		{"a body that stops coming", readTimeout, false, http.StatusRequestTimeout, "the request body was not received in time"},
		{"a body still coming at the request deadline", requestDeadline, false, http.StatusRequestTimeout, "the request body was not received in time"},
		{"a body cut short", readTimeout, true, http.StatusBadRequest, "the request body was not received in full"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr
			start := time.Now()
			res, body := rawPost(t, addr, head, firstTen, tt.closeWrite)
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d (after %s)", res.StatusCode, tt.status, time.Since(start))
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
			errs := graphQLErrors(t, body)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, tt.message) {
				t.Errorf("errors %+v, want one saying %q", errs, tt.message)
			}
			host, _, _ := net.SplitHostPort(addr)
			for _, internal := range []string{host, "tcp", "timeout", "EOF"} {
				if strings.Contains(body, internal) {
					t.Errorf("the answer %q shows %q", body, internal)
				}
			}
		})
	}
	if lines := logs.ErrorLines(); len(lines) > 0 {
		t.Errorf("logged at ERROR:\n%s", strings.Join(lines, ""))
	}
}

// TestBodiesThatDoNotDecodeAreNotEchoed: a body that is not a JSON GraphQL
// request is answered in a few words that say where it goes wrong, whatever
// its size, and none of it is sent back.
func TestBodiesThatDoNotDecodeAreNotEchoed(t *testing.T) {
	srv, _ := demo(t)
	const bad = `{"query": x`
	huge := bad + strings.Repeat("y", graphqlhttp.MaxRequestBytes-len(bad))
	multiline := "{\n  \"query\": \"{ __typename }\",\n  \"variables\": {\"a\": 1,}\n}"
	twice := `{"query": "{ __typename }"} {"query": "{ __typename }"}`
	for _, tt := range []struct {
		name, body string
		want       []string
	}{
		{"a megabyte of bad JSON", huge, []string{"at byte 11 (line 1, column 11): invalid character 'x'"}},
		{"bad JSON on its third line", multiline,
			[]string{fmt.Sprintf("at byte %d (line 3, column 24): invalid character '}'", strings.Index(multiline, ",}")+2)}},
		{"a query that is not a string", `{"query": 12345}`, []string{`"query" must be a string, not number`}},
		{"variables that are not an object", `{"query": "{ __typename }", "variables": [1]}`, []string{`"variables" must be an object, not array`}},
		{"not an object", `[1, 2]`, []string{"at byte 1 ", "a GraphQL request is a JSON object, not array"}},
		{"two requests", twice, []string{fmt.Sprintf("at byte %d (line 1, column %[1]d): data after", strings.LastIndex(twice, `{"query"`)+1)}},
		{"JSON cut short", `{"query": "{ __typ`, []string{"the body ends before its JSON does"}},
		{"no body", ``, []string{"the request body is empty"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := http.Post(srv.URL+"/graphql", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", res.StatusCode)
			}
			if len(raw) >= 1024 {
				t.Fatalf("the answer is %d bytes, want under 1 KB: %.200s…", len(raw), raw)
			}
			errs := graphQLErrors(t, string(raw))
			for _, want := range tt.want {
				if !strings.Contains(errs[0].Message, want) {
					t.Errorf("message %q does not say %q", errs[0].Message, want)
				}
			}
			for _, internal := range []string{"yyy", "RawParams", "Go ", "interface"} {
				if strings.Contains(string(raw), internal) {
					t.Errorf("the answer %s shows %q", raw, internal)
				}
			}
		})
	}

	// gqlgen's GET transport, which serves GET, says only which parameter
	// did not decode.
	res, raw := srv.Get(t, "/graphql?query="+url.QueryEscape("{ __typename }")+"&variables="+url.QueryEscape(`{"a": `+strings.Repeat("y", 100_000)), nil)
	if res.StatusCode != http.StatusBadRequest || len(raw) >= 1024 || strings.Contains(string(raw), "yyy") {
		t.Errorf("GET with bad variables: %d %.300s, want a 400 under 1 KB, without the variables", res.StatusCode, raw)
	}
}

// TestBusyDatabaseAnswersRetryAfter: when every connection stays busy past
// the acquire timeout, an operation that could read nothing is a 503 with
// Retry-After and its UNAVAILABLE error, and no data entry, over POST and
// GET and under both media types; one that answered some of its fields is a
// 200 with that data, its UNAVAILABLE error and Retry-After (GraphQL over
// HTTP requires a 2xx for an answer with data). Either is answered within
// one acquire timeout: the direct executor used to give a refused operation
// up to gqlgen's, whose run waited the timeout again. The failure is logged
// at WARN, not ERROR.
func TestBusyDatabaseAnswersRetryAfter(t *testing.T) {
	const acquireTimeout = 500 * time.Millisecond
	srv, st, logs := loggedDemo(t, store.WithPool(1, acquireTimeout))
	var someInventory struct {
		Inventories struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	srv.MustData(t, companyA, `{ inventories(first: 1) { edges { node { id } } } }`, nil, &someInventory)
	send := func(method, accept, query string) (*http.Response, map[string]json.RawMessage, time.Duration) {
		var req *http.Request
		if method == http.MethodGet {
			req, _ = http.NewRequest(method, srv.URL+"/graphql?query="+url.QueryEscape(query), nil)
		} else {
			body, _ := json.Marshal(map[string]string{"query": query})
			req, _ = http.NewRequest(method, srv.URL+"/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", accept)
		req.Header.Set("X-Company-Id", companyA)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return res, out, time.Since(start)
	}
	codes := func(out map[string]json.RawMessage) []string {
		var errs []apitest.Error
		_ = json.Unmarshal(out["errors"], &errs)
		var codes []string
		for _, e := range errs {
			codes = append(codes, e.Code())
		}
		return codes
	}

	tx, err := st.Client.Tx(context.Background()) // holds the one connection
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, accept := range []string{"application/json", "application/graphql-response+json"} {
			name := method + " " + accept
			res, out, elapsed := send(method, accept, `{ inventories { totalCount edges { node { id environments { name } } } } }`)
			if got := codes(out); len(got) != 1 || got[0] != string(apperr.Unavailable) {
				t.Errorf("%s with the database busy: errors %v, want one UNAVAILABLE", name, got)
			}
			if res.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s: status %d, want 503", name, res.StatusCode)
			}
			if data, ok := out["data"]; ok {
				t.Errorf("%s: data %s, want no data entry (nothing was read)", name, data)
			}
			if got, want := res.Header.Get("Retry-After"), strconv.Itoa(apperr.RetryAfterSeconds); got != want {
				t.Errorf("%s: Retry-After %q, want %q", name, got, want)
			}
			// Twice the timeout is what a second run costs; the bound leaves
			// a loaded machine the rest.
			if elapsed >= 2*acquireTimeout {
				t.Errorf("%s: answered after %s, want within one acquire timeout (%s)", name, elapsed, acquireTimeout)
			}
		}
	}

	// Introspection runs on gqlgen's executor, which answers what needs no
	// database and nulls the rest: data, so a 200.
	res, out, _ := send(http.MethodPost, "application/graphql-response+json",
		`{ __schema { queryType { name } } node(id: "`+someInventory.Inventories.Edges[0].Node.ID+`") { id } }`)
	if got := codes(out); res.StatusCode != http.StatusOK || len(got) != 1 || got[0] != string(apperr.Unavailable) ||
		!strings.Contains(string(out["data"]), `"queryType"`) || res.Header.Get("Retry-After") == "" {
		t.Errorf("part of an answer with the database busy: %d %v, Retry-After %q, data %s; want 200, UNAVAILABLE, Retry-After and the data read",
			res.StatusCode, got, res.Header.Get("Retry-After"), out["data"])
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"graphql: unavailable"`) {
		t.Errorf("the outage was not logged at WARN:\n%s", logs.String())
	}
	if lines := logs.ErrorLines(); len(lines) > 0 {
		t.Errorf("logged at ERROR:\n%s", strings.Join(lines, ""))
	}

	res, out, _ = send(http.MethodPost, "application/json", `{ inventories { totalCount } }`)
	if res.StatusCode != http.StatusOK || out["errors"] != nil || res.Header.Get("Retry-After") != "" {
		t.Errorf("with the database free again: %d %s and Retry-After %q, want a 200 without them", res.StatusCode, out["errors"], res.Header.Get("Retry-After"))
	}
}

// GraphQL over HTTP to the letter (graphql-http's audit: 61 of 61). Under
// application/json a well-formed request is answered 200 whatever its
// document's errors; under application/graphql-response+json a document
// that does not parse or validate is a 400; neither answer has a data entry,
// which only an operation that ran has; and a body without a query is not a
// GraphQL request at all (400).
func TestGraphQLOverHTTPStatuses(t *testing.T) {
	srv, _ := demo(t)
	for _, tt := range []struct {
		name, accept, body string
		status             int
	}{
		{"parse failure, JSON", "application/json", `{"query":"{"}`, http.StatusOK},
		{"validation failure, JSON", "application/json", `{"query":"{ nope }"}`, http.StatusOK},
		{"variable coercion failure, JSON", "application/json", `{"query":"query($n: Int!) { inventories(first: $n) { totalCount } }","variables":{"n":"x"}}`, http.StatusOK},
		{"parse failure, GraphQL response", "application/graphql-response+json", `{"query":"{"}`, http.StatusBadRequest},
		{"validation failure, GraphQL response", "application/graphql-response+json", `{"query":"{ nope }"}`, http.StatusBadRequest},
		{"no query", "application/json", `{"qeury":"{ __typename }"}`, http.StatusBadRequest},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", tt.accept)
		req.Header.Set("X-Company-Id", companyA)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("%s: %s is not JSON", tt.name, raw)
		}
		_, hasData := body["data"]
		if res.StatusCode != tt.status || hasData || len(body["errors"]) == 0 {
			t.Errorf("%s: got %d %s, want %d with errors and no data entry", tt.name, res.StatusCode, raw, tt.status)
		}
	}
}
