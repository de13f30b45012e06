package server_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// A request's id is in its answer's header, its error body and every line it
// logs: from a user's report to the log lines in one search.
func TestARequestsIdLeadsFromItsErrorToItsLogLines(t *testing.T) {
	st := testdb.Open(t)
	var logs apitest.LogBuffer
	srv := apitest.NewServerLogging(t, st, server.Options{Files: apitest.Files(t), AccessLog: "info"}, logs.Logger(0))

	status, header, body := request(t, http.MethodGet, srv.URL+"/api/v1/inventories?pageSize=zero",
		http.Header{"X-Company-Id": {company}, "X-Request-Id": {"report-42"}}, nil)
	var rest struct {
		Error struct{ Code, RequestID string }
	}
	if err := json.Unmarshal(body, &rest); err != nil || status != http.StatusBadRequest || header.Get("X-Request-Id") != "report-42" ||
		rest.Error.RequestID != "report-42" {
		t.Errorf("REST error: %d, header %q, body %s: want the id sent, in both", status, header.Get("X-Request-Id"), body)
	}
	var access map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, `"msg":"http request"`) {
			_ = json.Unmarshal([]byte(line), &access)
		}
	}
	if access["request_id"] != "report-42" || access["level"] != "INFO" || access["status"] != float64(400) || access["path"] != "/api/v1/inventories" {
		t.Errorf("access log line: %v, want one at info with the request id and its status", access)
	}

	// GraphQL errors carry it in their extensions.
	status, header, body = request(t, http.MethodPost, srv.URL+"/graphql", http.Header{"X-Request-Id": {"report-43"}},
		[]byte(`{"query":"{ inventories(first: 1) { totalCount } }"}`))
	if status != http.StatusOK || !strings.Contains(string(body), `"requestId":"report-43"`) || header.Get("X-Request-Id") != "report-43" {
		t.Errorf("GraphQL error: %d %s, want extensions.requestId report-43", status, body)
	}

	// An id that is not a plain token (it would forge log lines) is replaced.
	for _, sent := range []string{"", "a b", "x\"y", strings.Repeat("a", 129)} {
		_, header, _ := request(t, http.MethodGet, srv.URL+"/healthz", http.Header{"X-Request-Id": {sent}}, nil)
		if got := header.Get("X-Request-Id"); !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(got) {
			t.Errorf("sent %q: id %q, want a generated one", sent, got)
		}
	}
}
