package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// A correction made anywhere (here an import, as inventoryd import
// --correct-signed makes it) drops the corrected inventory's kept trees on
// every instance, when its event reaches each one's hub.
func TestACorrectionDropsTheKeptTreeOnEveryInstance(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one := newInstance(t, url, server.Options{Metrics: metrics.New()})
	two := newInstance(t, url, server.Options{Metrics: metrics.New()})
	company := datagen.DemoCompanies[0]
	ctx := tenant.WithCompany(context.Background(), company)
	signed, err := one.st.Client.Inventory.Query().Where(inventory.IsSigned(true), inventory.HasEnvironments()).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	query := `query($id: ID!) { node(id: $id) { ... on Inventory { environments { name items { name } } } } }`
	vars := map[string]any{"id": signed.ID.String()}
	for _, in := range []*instance{one, two} {
		if res := in.srv.GraphQL(t, company.String(), query, vars); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		if n := keptTrees(t, in.srv); n != 1 {
			t.Fatalf("trees kept after one read: %d, want 1", n)
		}
	}

	fs, dir := apitest.Files(t), t.TempDir()
	var out bytes.Buffer
	if _, err := (&transfer.Exporter{Client: one.st.Client, Files: fs, FilesDir: dir}).Export(context.Background(), company, &out); err != nil {
		t.Fatal(err)
	}
	var line []byte
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var rec transfer.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.InventoryID == signed.ID.String() {
			rec.EnvironmentDiagnostics[0].EnvironmentName = "Corrected room"
			line, _ = json.Marshal(rec)
		}
	}
	im := &transfer.Importer{Client: one.st.Client, Files: fs, FilesDir: dir, CorrectSigned: true}
	if sum, err := im.Import(context.Background(), bytes.NewReader(append(line, '\n'))); err != nil || sum.Updated != 1 {
		t.Fatalf("correcting: %v %v (%v)", sum, sum.Rejections, err)
	}
	for _, in := range []*instance{one, two} {
		deadline := time.Now().Add(10 * time.Second)
		for keptTrees(t, in.srv) != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the corrected inventory's tree is still kept 10 s after its correction")
			}
			time.Sleep(20 * time.Millisecond)
		}
		res := in.srv.GraphQL(t, company.String(), query, vars)
		if len(res.Errors) > 0 || !bytes.Contains(res.Data, []byte("Corrected room")) {
			t.Fatalf("after the correction: %s %v", res.Data, res.Errors)
		}
	}
}

// keptTrees reads the trees srv's cache holds, from its /metrics.
func keptTrees(t *testing.T, srv *apitest.Server) int {
	t.Helper()
	_, body := srv.Get(t, "/metrics", nil)
	m := regexp.MustCompile(`(?m)^inventory_tree_cache_trees ([0-9]+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatal("no inventory_tree_cache_trees in /metrics")
	}
	n := 0
	for _, c := range m[1] {
		n = n*10 + int(c-'0')
	}
	return n
}
