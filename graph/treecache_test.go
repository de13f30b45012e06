package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// treeDocuments are selections of inventories' trees in many shapes: the
// benchmark's, the IDE's example, aliases of one field in two shapes,
// fragments with @skip and @include, a node lookup, a shape that is never
// kept (a photo's signed URL) and one beside the inventory's mutable fields.
var treeDocuments = []struct {
	name, query string
	vars        map[string]any
	// keeps: whether the signed trees it reads are kept ("" when it may
	// read none: the IDE's newest three may all be unsigned).
	keeps string
}{
	{"bench nested", `query($first: Int!) { inventories(first: $first, orderBy: {field: CREATED_AT, direction: ASC}) { edges { node {
		id createdAt rentalPrice isSigned property { id address city }
		environments { id name level items { id name rating toRepair material { id name } photos { id storageReference } } } } } } }`,
		map[string]any{"first": 20}, "yes"},
	{"ide example", ide.ExampleQuery, nil, ""},
	{"aliases", `{ inventories(first: 20) { edges { node { id
		rooms: environments(first: 1) { name items(first: 2) { name } }
		all: environments { id description order items { id description order rating materialId } } } } } }`, nil, "yes"},
	{"fragments", `query($withItems: Boolean!, $no: Boolean!) { inventories(first: 20) { edges { node { ...tree } } } }
		fragment tree on Inventory { version environments { ...room items @include(if: $withItems) { name photos { ... on Photo { id contentType } } } } }
		fragment room on Environment { __typename id name description @skip(if: $no) }`,
		map[string]any{"withItems": true, "no": false}, "yes"},
	{"fragments, other variables", `query($withItems: Boolean!, $no: Boolean!) { inventories(first: 20) { edges { node { ...tree } } } }
		fragment tree on Inventory { version environments { ...room items @include(if: $withItems) { name photos { ... on Photo { id contentType } } } } }
		fragment room on Environment { __typename id name description @skip(if: $no) }`,
		map[string]any{"withItems": false, "no": true}, "yes"},
	{"never kept", `{ inventories(first: 5) { edges { node { id environments { items { photos { id url } } } } } } }`, nil, "no"},
	{"back up the tree", `{ inventories(first: 5) { edges { node { id environments { id inventory { id } } } } } }`, nil, "no"},
	{"property's inventories", `{ properties(first: 5) { edges { node { id inventories(first: 3) { edges { node { id environments { name items { name } } } } } } } } }`, nil, "yes"},
}

// treeServers serve st twice: with the tree cache (its default) and without.
func treeServers(t *testing.T, st *store.Store) (kept, plain *apitest.Server) {
	t.Helper()
	fs := apitest.Files(t)
	kept = apitest.NewServerWith(t, st, server.Options{Files: fs, Metrics: metrics.New()})
	plain = apitest.NewServerWith(t, st, server.Options{Files: fs, TreeCacheBytes: -1})
	return kept, plain
}

// answer is the bytes of a GraphQL answer: what the differential compares,
// but for the server's own address in download URLs (the two servers'
// differ).
func answer(t *testing.T, srv *apitest.Server, company, query string, vars map[string]any) []byte {
	t.Helper()
	res := srv.GraphQL(t, company, query, vars)
	if len(res.Errors) > 0 {
		t.Fatalf("%s: errors %v", query, res.Errors)
	}
	data := serverAddress.ReplaceAll(res.Data, []byte("http://server"))
	return urlExpiry.ReplaceAll(data, []byte("expires=…&signature=…"))
}

// treeHits reads the trees srv answered from its cache (its /metrics).
func treeHits(t *testing.T, srv *apitest.Server) int {
	t.Helper()
	_, body := srv.Get(t, "/metrics", nil)
	m := regexp.MustCompile(`(?m)^inventory_tree_cache_hits_total ([0-9]+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no inventory_tree_cache_hits_total in /metrics:\n%s", clip(body))
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

var (
	serverAddress = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)
	// A signed URL's expiry counts from the request's second, and its
	// signature with it: two requests a second apart differ there.
	urlExpiry = regexp.MustCompile(`expires=[0-9]+&signature=[A-Za-z0-9_-]+`)
)

// clip keeps a failure's message readable.
func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

func loadTrees(t *testing.T) *store.Store {
	t.Helper()
	st := testdb.Open(t)
	size := datagen.Size{Companies: 2, PropertiesPerCompany: 4, InventoriesPerProperty: 3, MinEnvironments: 2, MaxEnvironments: 4,
		MinItems: 1, MaxItems: 5, MaxPhotos: 2}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 11, size); err != nil {
		t.Fatal(err)
	}
	return st
}

func signedOf(t *testing.T, st *store.Store, company uuid.UUID) []*ent.Inventory {
	t.Helper()
	ctx := tenant.WithCompany(context.Background(), company)
	signed, err := st.Client.Inventory.Query().Where(inventory.IsSigned(true)).All(ctx)
	if err != nil || len(signed) == 0 {
		t.Fatalf("signed inventories of %s: %d (%v), want some", company, len(signed), err)
	}
	return signed
}

func TestKeptTreesAnswerByteForByteAsTheDatabaseDoes(t *testing.T) {
	st := loadTrees(t)
	kept, plain := treeServers(t, st)
	for _, doc := range treeDocuments {
		t.Run(doc.name, func(t *testing.T) {
			hits := treeHits(t, kept)
			defer func() {
				// The shapes of frozen fields only, and only where the
				// inventories' own query loads their trees, are kept.
				if served := treeHits(t, kept) > hits; doc.keeps != "" && served != (doc.keeps == "yes") {
					t.Errorf("trees served from the cache: %t, want %s", served, doc.keeps)
				}
			}()
			want := answer(t, plain, companyA, doc.query, doc.vars)
			for round := range 3 { // read, kept, then from the cache
				if got := answer(t, kept, companyA, doc.query, doc.vars); !bytes.Equal(got, want) {
					t.Fatalf("round %d with the cache:\n%s\nwithout:\n%s", round, clip(got), clip(want))
				}
			}
		})
	}
	// The REST detail (A1) runs a GraphQL document of its own: the same.
	for _, inv := range signedOf(t, st, datagen.DemoCompanies[0])[:3] {
		path := "/inventory/detail/" + inv.ID.String() + "?x-company-id=" + companyA
		_, want := plain.Get(t, path, nil)
		for range 2 {
			if _, got := kept.Get(t, path, nil); !bytes.Equal(got, want) {
				t.Fatalf("A1 %s with the cache:\n%s\nwithout:\n%s", inv.ID, clip(got), clip(want))
			}
		}
	}
}

func TestAKeptTreeSkipsTheDatabase(t *testing.T) {
	var counter testdb.Counter
	st := testdb.Open(t, counter.Option())
	size := datagen.Size{Companies: 1, PropertiesPerCompany: 3, InventoriesPerProperty: 2, MinEnvironments: 3, MaxEnvironments: 3,
		MinItems: 4, MaxItems: 4, MaxPhotos: 2}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 3, size); err != nil {
		t.Fatal(err)
	}
	signed := signedOf(t, st, datagen.DemoCompanies[0])
	srv := apitest.NewServer(t, st, nil)
	query := `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Inventory { id environments { name items { name material { name } photos { storageReference } } } } } }`
	ids := make([]string, len(signed))
	for i, inv := range signed {
		ids[i] = inv.ID.String()
	}
	vars := map[string]any{"ids": ids}
	first := answer(t, srv, companyA, query, vars)
	counter.Reset()
	again := answer(t, srv, companyA, query, vars)
	if !bytes.Equal(first, again) {
		t.Fatalf("from the cache:\n%s\nfrom the database:\n%s", clip(again), clip(first))
	}
	for _, s := range strings.Split(counter.Statements(), "\n") {
		for _, table := range []string{"environments", "items", "photos", "materials"} {
			if strings.Contains(s, "FROM `"+table+"`") || strings.Contains(s, `FROM "`+table+`"`) {
				t.Errorf("a kept tree read %s: %s", table, s)
			}
		}
	}
	if !strings.Contains(counter.Statements(), "inventories") {
		t.Errorf("the inventories were not read (under the company's policy):\n%s", counter.Statements())
	}
}

func TestAKeptTreeIsNeverServedToAnotherCompany(t *testing.T) {
	st := loadTrees(t)
	kept, plain := treeServers(t, st)
	signed := signedOf(t, st, datagen.DemoCompanies[0])
	query := `query($id: ID!) { node(id: $id) { id ... on Inventory { environments { id name items { name } } } } }`
	for _, inv := range signed {
		vars := map[string]any{"id": inv.ID.String()}
		answer(t, kept, companyA, query, vars) // kept
		answer(t, kept, companyA, query, vars) // served from the cache
		want := plain.GraphQL(t, companyB, query, vars)
		got := kept.GraphQL(t, companyB, query, vars)
		if !bytes.Equal(got.Data, want.Data) || fmt.Sprint(got.Errors) != fmt.Sprint(want.Errors) {
			t.Fatalf("company B asking for A's %s: with the cache %s %v, without %s %v", inv.ID, got.Data, got.Errors, want.Data, want.Errors)
		}
		if bytes.Contains(got.Data, []byte(inv.ID.String())) || bytes.Contains(got.Data, []byte("environments")) {
			t.Fatalf("company B was served A's tree: %s", got.Data)
		}
	}
}

func TestACorrectedTreeIsServedAsCorrected(t *testing.T) {
	st := loadTrees(t)
	kept, plain := treeServers(t, st)
	query := treeDocuments[0].query
	vars := treeDocuments[0].vars
	answer(t, kept, companyA, query, vars)
	before := answer(t, kept, companyA, query, vars)

	// Correct one signed inventory's first item, as an operator would: an
	// export's line changed, imported with --correct-signed.
	fs, dir := apitest.Files(t), t.TempDir()
	var out bytes.Buffer
	if _, err := (&transfer.Exporter{Client: st.Client, Files: fs, FilesDir: dir}).Export(context.Background(), datagen.DemoCompanies[0], &out); err != nil {
		t.Fatal(err)
	}
	var line []byte
	for l := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var rec transfer.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if !rec.IsSigned || !strings.Contains(string(before), rec.InventoryID) || len(rec.EnvironmentDiagnostics) == 0 ||
			len(rec.EnvironmentDiagnostics[0].ItemDiagnostic) == 0 {
			continue
		}
		rec.EnvironmentDiagnostics[0].ItemDiagnostic[0].ItemName = "Corrected item"
		line, _ = json.Marshal(rec)
		break
	}
	if line == nil {
		t.Fatal("no signed inventory with an item in the answer")
	}
	im := &transfer.Importer{Client: st.Client, Files: fs, FilesDir: dir, CorrectSigned: true}
	if sum, err := im.Import(context.Background(), bytes.NewReader(append(line, '\n'))); err != nil || sum.Updated != 1 {
		t.Fatalf("correcting: %v %v (%v)", sum, sum.Rejections, err)
	}

	want := answer(t, plain, companyA, query, vars)
	if !bytes.Contains(want, []byte("Corrected item")) {
		t.Fatal("the correction is not in the answer without the cache")
	}
	for range 2 {
		if got := answer(t, kept, companyA, query, vars); !bytes.Equal(got, want) {
			t.Fatalf("after the correction, with the cache:\n%s\nwithout:\n%s", clip(got), clip(want))
		}
	}
}
