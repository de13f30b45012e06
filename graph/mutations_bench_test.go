package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/jobs"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// BenchmarkCreateInventory makes inventories of 6 rooms and 60 items over
// real HTTP (the server's whole handler, loopback, the client's own work
// included) on a copy of the demo records: SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set. Each request is a new inventory (a new id);
// "answer_id" asks back its id and version, "answer_tree" its whole tree.
// It reports the statements each request sends, transactions included, and
// the median request's time (ms-p50).
func BenchmarkCreateInventory(b *testing.B) {
	counter := testdb.Counter{InTransactions: true}
	w := newWrites(b, counter.Option())
	for _, bench := range []struct{ name, answer string }{
		{"answer_id", `inventory { id version }`},
		{"answer_tree", writtenInventory},
	} {
		b.Run(bench.name, func(b *testing.B) {
			doc := `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { ` + bench.answer + ` } }`
			const placeholder = "00000000-0000-4000-8000-000000000000"
			body, err := json.Marshal(map[string]any{"query": doc, "variables": map[string]any{"input": w.tree(placeholder, 6, 10)}})
			if err != nil {
				b.Fatal(err)
			}
			counter.Reset()
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				mutate(b, w.srv.URL+"/graphql", bytes.Replace(body, []byte(placeholder), []byte(uuid.NewString()), 1))
				took = append(took, time.Since(start))
			}
			b.ReportMetric(float64(counter.Count())/float64(b.N), "statements/op")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-p50")
		})
	}
}

// mutate sends a mutation and fails on an error in its answer.
func mutate(b *testing.B, url string, body []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Company-Id", companyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || bytes.Contains(raw, []byte(`"errors"`)) {
		b.Fatalf("HTTP %d, %v: %.500s", res.StatusCode, err, raw)
	}
}

// BenchmarkCreateInventoryJobInsert is what the durable jobs add to
// createInventory (6 rooms, 60 items, its id and version answered): the
// same requests, interleaved, to a server without jobs and to one whose
// company has a webhook endpoint, so that each inventory created inserts
// its delivery and the delivery's River job in the write's transaction.
// It reports each side's p50 and their difference, and fails when the
// jobs add more than a millisecond at p50 (issue 37's bound).
func BenchmarkCreateInventoryJobInsert(b *testing.B) {
	plain := newWrites(b)
	withJobs := newWritesServing(b, func(st *store.Store, o *server.Options) {
		j, err := jobs.New(context.Background(), st, jobs.Options{}) // inserts only: no delivery is sent
		if err != nil {
			b.Fatal(err)
		}
		o.Jobs = j
	})
	withJobs.srv.MustData(b, companyA, `mutation { createWebhookEndpoint(input: {url: "https://receiver.example/hooks", events: [INVENTORY_CREATED]}) { secret } }`, nil, &struct{}{})
	doc := `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id version } } }`
	const placeholder = "00000000-0000-4000-8000-000000000000"
	body, err := json.Marshal(map[string]any{"query": doc, "variables": map[string]any{"input": plain.tree(placeholder, 6, 10)}})
	if err != nil {
		b.Fatal(err)
	}
	var without, with []time.Duration
	timed := func(url string) time.Duration {
		start := time.Now()
		mutate(b, url+"/graphql", bytes.Replace(body, []byte(placeholder), []byte(uuid.NewString()), 1))
		return time.Since(start)
	}
	b.ReportAllocs()
	for b.Loop() {
		without = append(without, timed(plain.srv.URL))
		with = append(with, timed(withJobs.srv.URL))
	}
	n, err := withJobs.st.Client.WebhookDelivery.Query().Count(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil || n < len(with) {
		b.Fatalf("deliveries made: %d, %v; want one per inventory created (%d)", n, err, len(with))
	}
	p50 := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	added := p50(with) - p50(without)
	b.ReportMetric(float64(p50(without).Microseconds())/1000, "ms-p50-without")
	b.ReportMetric(float64(p50(with).Microseconds())/1000, "ms-p50-with-jobs")
	b.ReportMetric(float64(added.Microseconds())/1000, "ms-p50-added")
	if len(with) >= 20 && added > time.Millisecond {
		b.Errorf("the job insert adds %s to createInventory at p50 (%s with, %s without); want at most 1 ms", added, p50(with), p50(without))
	}
}
