package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// BenchmarkCreateInventory makes inventories of 6 rooms and 60 items over
// real HTTP (the server's whole handler, loopback, the client's own work
// included) on a copy of the demo records: SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set. Each request is a new inventory (a new id);
// "answer_id" asks back its id and version, "answer_tree" its whole tree.
// It reports the statements each request sends, transactions included.
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
			b.ReportAllocs()
			for b.Loop() {
				mutate(b, w.srv.URL+"/graphql", bytes.Replace(body, []byte(placeholder), []byte(uuid.NewString()), 1))
			}
			b.ReportMetric(float64(counter.Count())/float64(b.N), "statements/op")
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
