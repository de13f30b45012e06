package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// graphQLErrors decodes an answer's errors: one error, the zero one, when
// the answer holds none (what is checked then fails, saying what came).
func graphQLErrors(body []byte) []apitest.Error {
	var answer struct{ Errors []apitest.Error }
	if err := json.Unmarshal(body, &answer); err != nil || len(answer.Errors) == 0 {
		return []apitest.Error{{}}
	}
	return answer.Errors
}

const subscription = `subscription { inventoryEvents { cursor kind } }`

// badRequestsCounted fails unless /metrics of srv has counted want
// BAD_REQUEST errors.
func badRequestsCounted(t *testing.T, srv *apitest.Server, want int) {
	t.Helper()
	_, _, body := request(t, http.MethodGet, srv.URL+"/metrics", nil, nil)
	if line := fmt.Sprintf(`inventory_graphql_errors_total{code="BAD_REQUEST"} %d`, want); !strings.Contains(string(body), line) {
		t.Errorf("/metrics: %s; want %s", grepLines(string(body), "inventory_graphql_errors_total"), line)
	}
}

// A subscription sent where one answer ends the request (a JSON POST, or
// one accepting multipart/mixed) is refused at once, 400 BAD_REQUEST,
// saying how to subscribe: graphql-ws, or Accept: text/event-stream. It
// used to wait for events until the request deadline and then say "ask for
// less, or try again later".
func TestASubscriptionPostedForOneAnswerIsToldHowToSubscribe(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Metrics: metrics.New()})
	header := http.Header{"X-Company-Id": {company}}
	body, _ := json.Marshal(map[string]string{"query": subscription})
	refusals := 0
	for name, accept := range map[string]string{"a JSON POST": "", "a POST accepting multipart/mixed": "multipart/mixed;deferSpec=20220824, application/json"} {
		h := header.Clone()
		if accept != "" {
			h.Set("Accept", accept)
		}
		status, _, raw := request(t, http.MethodPost, one.srv.URL+"/graphql", h, body)
		errs := graphQLErrors(raw)
		refusals++
		if status != http.StatusBadRequest || len(errs) != 1 || errs[0].Code() != "BAD_REQUEST" ||
			!strings.Contains(errs[0].Message, "graphql-ws") || !strings.Contains(errs[0].Message, "Accept: text/event-stream") {
			t.Errorf("a subscription as %s: %d %s; want 400 BAD_REQUEST saying to use graphql-ws or Accept: text/event-stream", name, status, raw)
		}
	}
	badRequestsCounted(t, one.srv, refusals)
}

// A mutation or subscription sent with GET is 405 with Allow: POST and
// BAD_REQUEST saying what to send instead, counted in
// inventory_graphql_errors_total; it was a 406 without a code, uncounted
// (and 200 when it accepted multipart/mixed).
func TestMutationsAndSubscriptionsSentWithGETAre405(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Metrics: metrics.New()})
	header := http.Header{"X-Company-Id": {company}}
	refusals := 0
	mutation := `mutation { removeItemPhoto(photoId: "00000000-0000-0000-0000-000000000001") { photoId } }`
	for _, tc := range []struct{ what, query, accept, says string }{
		{"a mutation", mutation, "", "send a mutation with POST"},
		{"a mutation accepting multipart/mixed", mutation, "multipart/mixed;deferSpec=20220824, application/json", "send a mutation with POST"},
		{"a subscription", subscription, "", "Accept: text/event-stream"},
		{"a subscription accepting graphql-response+json", subscription, "application/graphql-response+json", "graphql-ws"},
	} {
		h := header.Clone()
		if tc.accept != "" {
			h.Set("Accept", tc.accept)
		}
		status, got, raw := request(t, http.MethodGet, one.srv.URL+"/graphql?query="+url.QueryEscape(tc.query), h, nil)
		errs := graphQLErrors(raw)
		refusals++
		if status != http.StatusMethodNotAllowed || got.Get("Allow") != "POST" || len(errs) != 1 || errs[0].Code() != "BAD_REQUEST" ||
			!strings.Contains(errs[0].Message, tc.says) || strings.Contains(string(raw), `"data":{`) {
			t.Errorf("%s sent with GET: %d Allow %q %s; want 405, Allow: POST, BAD_REQUEST saying %q and no data", tc.what, status, got.Get("Allow"), raw, tc.says)
		}
	}
	// A query sent with GET is still answered.
	status, _, raw := request(t, http.MethodGet, one.srv.URL+"/graphql?query="+url.QueryEscape(`{ inventories(first: 1) { totalCount } }`), header, nil)
	if status != http.StatusOK || !strings.Contains(string(raw), `"totalCount"`) || strings.Contains(string(raw), "errors") {
		t.Errorf("a query sent with GET: %d %s; want it answered", status, raw)
	}
	badRequestsCounted(t, one.srv, refusals)
}

// closeOf is the close code and reason of a connection refused at
// connection_init.
func closeOf(err error) (websocket.StatusCode, string) {
	var closed websocket.CloseError
	if errors.As(err, &closed) {
		return closed.Code, closed.Reason
	}
	return -1, ""
}

// A WebSocket that sends no credential is closed with 4403, as one with a
// refused credential is, and told to send it in connection_init's payload
// (a browser cannot set a WebSocket's headers): in header mode its
// company, in apikey mode its key. It used to be acknowledged, and each
// subscription then failed, telling it to set the X-Company-Id header.
func TestAWebSocketWithoutCredentialsIsToldOfConnectionInit(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	headerMode := newInstance(t, url, server.Options{})
	for name, payload := range map[string]map[string]any{"no payload": nil, "an empty one": {}, "another header": {"X-Request-Id": "abc"}} {
		c, err := dialLive(t, headerMode.srv.URL, payload)
		if c != nil {
			c.subscribe("1", eventsSubscription, nil)
			m, err := c.next(5 * time.Second)
			t.Fatalf("header mode, %s: acknowledged, and the subscription got %s %s %v; want closed with 4403", name, m.Type, m.Payload, err)
		}
		code, reason := closeOf(err)
		if code != 4403 || !strings.Contains(reason, "connection_init payload") || !strings.Contains(reason, `{"X-Company-Id": "<uuid>"}`) {
			t.Errorf("header mode, %s: closed %d %q (%v); want 4403 naming the connection_init payload's X-Company-Id", name, code, reason, err)
		}
	}
	if c, err := dialLive(t, headerMode.srv.URL, map[string]any{"X-Company-Id": "not-a-company"}); c != nil || websocket.CloseStatus(err) != 4403 {
		t.Errorf("header mode, a company that is no UUID: %v; want closed with 4403", err)
	}
	if _, err := dialLive(t, headerMode.srv.URL, map[string]any{"X-Company-Id": company}); err != nil {
		t.Errorf("header mode, with the company: %v; want it acknowledged", err)
	}

	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys := auth.NewKeys(st.Client)
	key, _, err := keys.Create(context.Background(), datagen.DemoCompanies[0], "dashboard", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	keyMode := newInstance(t, url, server.Options{Auth: auth.APIKey, Verifier: keys})
	_, err = dialLive(t, keyMode.srv.URL, map[string]any{})
	if code, reason := closeOf(err); code != 4403 || !strings.Contains(reason, "connection_init payload") || !strings.Contains(reason, `"Authorization": "Bearer`) {
		t.Errorf("apikey mode, no key: closed %d %q (%v); want 4403 naming the connection_init payload's Authorization", code, reason, err)
	}
	if _, err := dialLive(t, keyMode.srv.URL, map[string]any{"Authorization": "Bearer " + key}); err != nil {
		t.Errorf("apikey mode, with the key: %v; want it acknowledged", err)
	}
	// Over HTTP the header is what a client sets.
	status, _, raw := request(t, http.MethodPost, keyMode.srv.URL+"/graphql", nil, []byte(`{"query":"{ inventories(first: 1) { totalCount } }"}`))
	if errs := graphQLErrors(raw); status != http.StatusUnauthorized || !strings.Contains(errs[0].Message, "Authorization: Bearer") {
		t.Errorf("apikey mode, no key over HTTP: %d %s; want 401 naming the Authorization header", status, raw)
	}
}

// The x-company-id parameter names the company at /graphql as it does in
// REST and as the README says, over every transport, through the one
// reader of the company (tenant.Named): a GET's and a POST's URL, and a
// WebSocket's. Named twice, it must name one company (fail closed).
func TestTheCompanyParameterNamesTheCompanyAtGraphQL(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{})
	const count = `{ inventories(first: 1) { totalCount } }`
	status, _, byHeader := request(t, http.MethodGet, one.srv.URL+"/graphql?query="+url.QueryEscape(count), http.Header{"X-Company-Id": {company}}, nil)
	if status != http.StatusOK || !strings.Contains(string(byHeader), `"totalCount"`) || strings.Contains(string(byHeader), "errors") {
		t.Fatalf("GET with the header: %d %s", status, byHeader)
	}
	get := one.srv.URL + "/graphql?x-company-id=" + company + "&query=" + url.QueryEscape(count)
	if status, _, raw := request(t, http.MethodGet, get, nil, nil); status != http.StatusOK || string(raw) != string(byHeader) {
		t.Errorf("GET with x-company-id: %d %s; want %s, as with the header", status, raw, byHeader)
	}
	body, _ := json.Marshal(map[string]string{"query": count})
	if status, _, raw := request(t, http.MethodPost, one.srv.URL+"/graphql?X-Company-Id="+company, nil, body); status != http.StatusOK || string(raw) != string(byHeader) {
		t.Errorf("POST with X-Company-Id in its URL: %d %s; want %s", status, raw, byHeader)
	}
	other := datagen.DemoCompanies[1].String()
	for name, h := range map[string]http.Header{"header and parameter disagreeing": {"X-Company-Id": {other}}, "no header": nil} {
		u := get
		if h == nil {
			u += "&x-company-id=" + other
		}
		status, _, raw := request(t, http.MethodGet, u, h, nil)
		errs := graphQLErrors(raw)
		if errs[0].Code() != "INVALID_ARGUMENT" || strings.Contains(string(raw), `"totalCount"`) {
			t.Errorf("two companies named (%s): %d %s; want INVALID_ARGUMENT and no data", name, status, raw)
		}
	}
	if status, _, raw := request(t, http.MethodPost, one.srv.URL+"/graphql?x-company-id="+company+"%zz", nil, body); strings.Contains(string(raw), `"totalCount"`) {
		t.Errorf("a query string that does not parse: %d %s; want no data (fail closed)", status, raw)
	}

	c, err := dialLiveAt(t, one.srv.URL+"/graphql?x-company-id="+company, nil)
	if err != nil {
		t.Fatalf("a WebSocket naming its company in its URL: %v; want it acknowledged", err)
	}
	c.send(wsMessage{ID: "1", Type: "subscribe", Payload: json.RawMessage(`{"query":"` + count + `"}`)})
	if m, err := c.next(5 * time.Second); err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), `"totalCount"`) {
		t.Errorf("a query over it: %s %s %v; want its company's count", m.Type, m.Payload, err)
	}
	if _, err := dialLiveAt(t, one.srv.URL+"/graphql?x-company-id="+other, map[string]any{"X-Company-Id": company}); websocket.CloseStatus(err) != 4403 {
		t.Errorf("a WebSocket whose URL and payload name two companies: %v; want closed with 4403", err)
	}
}
