package graph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every error a client gets has extensions.code, the transport's refusals
// included: no JSON, no query, a method or media type not served, @defer
// where it cannot be answered in parts, a body over the bound.
func TestEveryTransportRefusalHasACode(t *testing.T) {
	srv, _ := demo(t)
	type sent struct{ method, contentType, body, query string }
	for name, tc := range map[string]struct {
		sent
		code string
	}{
		"bad JSON":          {sent{http.MethodPost, "application/json", `{"query": x`, ""}, "BAD_REQUEST"},
		"no query":          {sent{http.MethodPost, "application/json", `{"variables": {}}`, ""}, "BAD_REQUEST"},
		"empty body":        {sent{http.MethodPost, "application/json", ``, ""}, "BAD_REQUEST"},
		"text/plain":        {sent{http.MethodPost, "text/plain", `{"query": "{ __typename }"}`, ""}, "BAD_REQUEST"},
		"PUT":               {sent{http.MethodPut, "application/json", `{"query": "{ __typename }"}`, ""}, "BAD_REQUEST"},
		"GET without query": {sent{http.MethodGet, "", "", "?variables=%7B%7D"}, "GRAPHQL_VALIDATION_FAILED"},
		"@defer over GET":   {sent{http.MethodGet, "", "", "?query=" + url.QueryEscape(`{ ... @defer { __typename } }`)}, "BAD_REQUEST"},
		"a body over 1 MB":  {sent{http.MethodPost, "application/json", `{"query": "` + strings.Repeat("x", 2<<20) + `"}`, ""}, "QUERY_TOO_LARGE"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+"/graphql"+tc.query, strings.NewReader(tc.body))
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		req.Header.Set("X-Company-Id", companyA)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var answer struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(raw, &answer); err != nil || len(answer.Errors) == 0 {
			t.Errorf("%s: %d %s: want a GraphQL error", name, res.StatusCode, raw)
			continue
		}
		for _, e := range answer.Errors {
			if e.Extensions["code"] != tc.code {
				t.Errorf("%s: %d %s: want code %s", name, res.StatusCode, raw, tc.code)
			}
		}
		// @defer over GET is refused as the operation runs: a GraphQL
		// answer of application/json, whose status is 200 whatever it holds.
		if (res.StatusCode < 400 || res.StatusCode >= 500) && name != "@defer over GET" {
			t.Errorf("%s: status %d, want a 4xx", name, res.StatusCode)
		}
	}
}
