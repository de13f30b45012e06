package graph_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/graph/querylimits"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// portfolio200k is the generator's data at a size where database work
// shows: two companies of 1,500 properties with three inventories each,
// about 200,000 items.
var portfolio200k = testdb.NewDataset("200k items", func(ctx context.Context, st *store.Store) error {
	size := datagen.Demo
	size.PropertiesPerCompany = 1_500
	_, err := datagen.Load(ctx, st.Client, nil, 1, size)
	return err
})

// costlyShapes are the documents issue 23 found to cost more than their
// price: each kept the database busy to the deadline on the million-item
// set, or wrote an answer of hundreds of megabytes.
func costlyShapes(materialID string) []struct{ name, query string } {
	n := func(count int, f func(i int) string) string {
		var b strings.Builder
		for i := range count {
			b.WriteString(f(i) + " ")
		}
		return b.String()
	}
	materials := `["` + strings.TrimSuffix(strings.Repeat(materialID+`", "`, 12), `", "`) + `"]`
	return []struct{ name, query string }{
		{"or_of_100_text_searches", `{ inventories(where: {or: [` + n(100, func(i int) string {
			return fmt.Sprintf(`{hasPropertyWith: {addressContainsFold: "calle %d"}}`, i)
		}) + `]}) { totalCount } }`},
		{"160_counts_under_12_materials", `{ nodes(ids: ` + materials + `) { ... on Material { ` + n(160, func(i int) string {
			return fmt.Sprintf(`c%d: items(where: {rating: %d}) { totalCount }`, i, i%5+1)
		}) + ` } } }`},
		{"50_repair_lists", `{ ` + n(50, func(i int) string { return fmt.Sprintf(`r%d: repairs(first: 100) { edges { node { id } } }`, i) }) + ` }`},
		{"100_deep_repair_pages", `{ ` + n(100, func(i int) string { return fmt.Sprintf(`p%d: repairPage(page: %d) { data { id } }`, i, 1000+i) }) + ` }`},
		{"100_materials_x_40_aliases", `{ nodes(ids: ["` + strings.TrimSuffix(strings.Repeat(materialID+`", "`, 100), `", "`) + `"]) { ... on Material { items(first: 100) { edges { node { ` +
			n(40, func(i int) string { return fmt.Sprintf("%s%02d: description", strings.Repeat("a", 98), i) }) + ` } } } } } }`},
	}
}

// BenchmarkCostlyShapes runs each of issue 23's costly documents on about
// 200,000 items (SQLite, or PostgreSQL with TEST_DATABASE_URL; bench/run
// runs both), before (priced as issue 11 did: no limit on the database's
// work nor on the answer's bytes) and after (today's limits: refused before
// any statement, or cut at the answer's bound). It reports the process's
// CPU per request (on SQLite the database's work is in it; on PostgreSQL the
// wall time is mostly the database's) and the answer's bytes.
func BenchmarkCostlyShapes(b *testing.B) {
	st := portfolio200k.Open(b)
	company := datagen.DemoCompanies[0]
	ctx := tenant.WithCompany(context.Background(), company)
	material, err := st.Client.Material.Query().FirstID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	unpriced := querylimits.Default
	unpriced.Cost = 1 << 30
	executors := []struct {
		name string
		exec *graph.Executor
	}{
		{"before", graph.NewExecutor(st.Client, st, nil, log, graph.ExecutorOptions{Limits: &unpriced, MaxResponseBytes: -1})},
		{"after", graph.NewExecutor(st.Client, st, nil, log, graph.ExecutorOptions{Budget: nil})},
	}
	for _, shape := range costlyShapes(material.String()) {
		for _, e := range executors {
			b.Run(shape.name+"/"+e.name, func(b *testing.B) {
				var cpu time.Duration
				var bytes int
				outcome := ""
				for b.Loop() {
					start := cpuTime()
					outcome, bytes = runOperation(ctx, e.exec, shape.query)
					cpu += cpuTime() - start
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(bytes), "answer-bytes")
				b.Logf("%s %s: %s", shape.name, e.name, outcome)
			})
		}
	}
}

// runOperation runs query as REST does, under the request deadline, and
// says how it ended and how long its answer was.
func runOperation(ctx context.Context, exec *graph.Executor, query string) (string, int) {
	ctx, cancel := context.WithTimeout(fairshare.WithKey(ctx, "bench"), 10*time.Second)
	defer cancel()
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query})
	if errs != nil {
		return "refused: " + fmt.Sprint(errs[0].Extensions["code"]), 0
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	res := responses(ctx)
	if len(res.Errors) > 0 {
		return "error: " + fmt.Sprint(res.Errors[0].Extensions["code"]), len(res.Data)
	}
	return "answered", len(res.Data)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
