package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
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

// TestTheSampledAccessLogKeepsFailuresAndSlowRequests: sampled, the access
// log writes every request that failed (4xx, 5xx) or took the slow time or
// longer, and one in AccessLogSample of the others, which says how many it
// stands for.
func TestTheSampledAccessLogKeepsFailuresAndSlowRequests(t *testing.T) {
	const slow = 300 * time.Millisecond
	st := testdb.DemoRecords.Open(t, store.WithPool(1, time.Minute))
	var logs apitest.LogBuffer
	srv := apitest.NewServerLogging(t, st, server.Options{Files: apitest.Files(t), AccessLog: "sampled", AccessLogSample: 10, SlowRequest: slow},
		logs.Logger(slog.LevelInfo))
	for range 25 {
		if status, _, _ := request(t, http.MethodGet, srv.URL+"/healthz", nil, nil); status != http.StatusOK {
			t.Fatal(status)
		}
	}
	failures := []string{"/api/v1/inventories?pageSize=zero&x-company-id=" + company, "/no/such/endpoint", "/api/v1/inventories"}
	for _, path := range failures {
		if status, _, _ := request(t, http.MethodGet, srv.URL+path, nil, nil); status < 400 {
			t.Fatalf("%s: %d, want a failure", path, status)
		}
	}
	// Slow but successful: it waits for the one connection, held a while.
	tx, err := st.Client.Tx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(2*slow, func() { _ = tx.Rollback() })
	if status, _, body := request(t, http.MethodGet, srv.URL+"/api/v1/inventories?x-company-id="+company, nil, nil); status != http.StatusOK {
		t.Fatalf("the slow request: %d %s", status, body)
	}

	var sampled, failed, slowLines int
	for _, line := range logs.Take(t) {
		if line["msg"] != "http request" {
			continue
		}
		status, _ := line["status"].(float64)
		// The duration's key names its unit: milliseconds, as a number.
		ms, ok := line["duration_ms"].(float64)
		if _, unitless := line["duration"]; !ok || unitless {
			t.Errorf("an access line without duration_ms, or with a duration of no unit: %v", line)
		}
		duration := time.Duration(ms * float64(time.Millisecond))
		switch {
		case line["path"] == "/healthz":
			sampled++
			if line["sample"] != float64(10) || line["level"] != "INFO" {
				t.Errorf("a sampled line: %v, want it at info, standing for 10 requests", line)
			}
		case status >= 400:
			failed++
		case duration >= slow:
			slowLines++
		}
		if status >= 400 || duration >= slow {
			if _, ok := line["sample"]; ok {
				t.Errorf("a failed or slow request's line says it is sampled: %v", line)
			}
		}
	}
	if sampled != 3 || failed != len(failures) || slowLines != 1 {
		t.Errorf("lines: %d of 25 successes (want 3: the 1st, 11th and 21st), %d of %d failures, %d of 1 slow request; want every failure and slow one",
			sampled, failed, len(failures), slowLines)
	}
}
