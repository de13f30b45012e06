package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// realisticQuery is a screen's read: a page of 20 inventories with their
// property and rooms.
const realisticQuery = `{ inventories(first: 20) { totalCount edges { node { id approvalCode property { address } environments { name } } } } }`

// BenchmarkTheSharedLimitsOverhead runs the same query through the whole
// gate (API key, rate limit, fair share, cost budget) on an instance that
// keeps its limits itself and on one that keeps them in Redis (two round
// trips a query: the rate, then the budget), with clients in parallel.
// queries/s of the two is the overhead (issue 35: at most 5%).
func BenchmarkTheSharedLimitsOverhead(b *testing.B) {
	rds := testdb.StartRedis(b)
	url := testdb.DemoRecords.URL(b)
	keys, key := demoKey(b, url)
	// Limits no query reaches, so that every one is served and charged.
	l := limits{rate: 1e6, burst: 1_000_000, capacity: 1e9, restore: 1e8}
	body, _ := json.Marshal(map[string]string{"query": realisticQuery})
	for _, c := range []struct{ name, redis string }{{"per instance", ""}, {"redis", rds.URL()}} {
		b.Run(c.name, func(b *testing.B) {
			i := newSharedInstance(b, url, c.redis, keys, l)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, i.srv.URL+"/graphql", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+key)
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					answer, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK || bytes.Contains(answer, []byte(`"errors"`)) {
						b.Errorf("status %d: %.300s", res.StatusCode, answer)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			if c.redis != "" && !i.shared.Shared() {
				b.Error("Redis fell out during the run: the figure is not Redis's")
			}
		})
	}
}
