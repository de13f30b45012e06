package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// After a few requests /metrics holds the families an operator watches,
// with labels a client cannot blow up (routes, not paths).
func TestMetricsCountRequestsOperationsErrorsAndThePool(t *testing.T) {
	st := testdb.Open(t)
	instruments := metrics.New()
	instruments.WatchDB(st.Stats)
	share := fairshare.NewQueue(server.ShareOptions(st, 0, time.Second))
	instruments.WatchShare(share.InFlight)
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), Metrics: instruments, Share: share})
	header := http.Header{"X-Company-Id": {company}}
	request(t, http.MethodGet, srv.URL+"/api/v1/inventories", header, nil)
	request(t, http.MethodGet, srv.URL+"/api/v1/inventories?pageSize=x", header, nil)
	request(t, http.MethodGet, srv.URL+"/inventory/detail/"+strings.Repeat("f", 8), header, nil)
	request(t, http.MethodPost, srv.URL+"/graphql", header, []byte(`{"query":"query Tree { inventories(first: 1) { totalCount } }"}`))
	request(t, http.MethodPost, srv.URL+"/graphql", nil, []byte(`{"query":"{ inventories(first: 1) { totalCount } }"}`))
	// A document over the complexity limit: every inventory's every photo.
	_, _, refused := request(t, http.MethodPost, srv.URL+"/graphql", header, []byte(`{"query":"{ inventories(first: 100) { edges { node { `+
		`environments { items { photos { id } a: photos { id } b: photos { id } c: photos { id } } } } } } }"}`))
	if !strings.Contains(string(refused), "COMPLEXITY_LIMIT_EXCEEDED") {
		t.Fatalf("the priced document was not refused: %s", refused)
	}

	status, _, body := request(t, http.MethodGet, srv.URL+"/metrics", nil, nil)
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	has := func(family string, labels map[string]string) bool {
		f := families[family]
		if f == nil {
			return false
		}
	metric:
		for _, m := range f.Metric {
			for name, value := range labels {
				if label(m, name) != value {
					continue metric
				}
			}
			return true
		}
		return false
	}
	for _, want := range []struct {
		family string
		labels map[string]string
	}{
		{"inventory_http_requests_total", map[string]string{"route": "/api/v1/inventories", "method": "GET", "status": "200"}},
		{"inventory_http_requests_total", map[string]string{"route": "/api/v1/inventories", "status": "400"}},
		{"inventory_http_requests_total", map[string]string{"route": "/inventory/detail/{inventoryId}", "status": "400"}},
		{"inventory_http_request_duration_seconds", map[string]string{"route": "/graphql"}},
		{"inventory_graphql_operation_duration_seconds", map[string]string{"operation": "Tree"}},
		{"inventory_graphql_errors_total", map[string]string{"code": "COMPLEXITY_LIMIT_EXCEEDED"}},
		{"inventory_graphql_errors_total", map[string]string{"code": "UNAUTHENTICATED"}},
		{"inventory_graphql_limit_refusals_total", map[string]string{"code": "COMPLEXITY_LIMIT_EXCEEDED"}},
		{"inventory_db_connections_open", nil},
		{"inventory_db_waits_total", nil},
		{"inventory_requests_running", nil},
		{"inventory_requests_waiting", nil},
		{"go_build_info", nil},
		{"go_goroutines", nil},
	} {
		if !has(want.family, want.labels) {
			t.Errorf("no %s %v in /metrics", want.family, want.labels)
		}
	}
	if strings.Contains(string(body), "ffffffff") {
		t.Errorf("a raw path is in a label: routes must be patterns")
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
