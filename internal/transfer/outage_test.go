package transfer_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// An import whose database goes down stops at the line it was on, says so,
// and calls no line bad: the lines before are committed and counted, the
// rest are neither written nor rejected. Before, every remaining line was
// rejected as bad, each with the same connection error. Once the database is
// back, the same store imports the whole file: the first lines are updated,
// the rest created.
//
// It starts a PostgreSQL cluster of its own, so it runs in the PostgreSQL
// test run only (TEST_DATABASE_URL set), as CI's other cluster tests do.
func TestImportStopsAtTheLineWhereTheDatabaseWentDown(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("starts a PostgreSQL cluster: runs when " + testdb.EnvURL + " is set")
	}
	c := testdb.StartCluster(t)
	ctx := context.Background()
	st, err := store.Open(ctx, c.URL(), store.WithConnectTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	company := uuid.New()
	lines, ids := recordsOf(t, company, 20)
	first, rest := lines[:10], lines[10:]

	// The lines come through a pipe, as from `inventoryd import -`: the
	// first ten are imported before the database goes down.
	done := make(chan int, 100)
	im := &transfer.Importer{Client: st.Client, Progress: func(int64) { done <- 1 }}
	pr, pw := io.Pipe()
	type result struct {
		sum transfer.Summary
		err error
	}
	finished := make(chan result, 1)
	go func() {
		sum, err := im.Import(ctx, pr)
		pr.Close() // the rest of the input is not read: let the writer go
		finished <- result{sum, err}
	}()
	go io.WriteString(pw, strings.Join(first, "\n")+"\n")
	for range first {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the first lines were not imported")
		}
	}
	c.Stop()
	go func() {
		io.WriteString(pw, strings.Join(rest, "\n")+"\n")
		pw.Close()
	}()
	var got result
	select {
	case got = <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("the import did not end with its database down")
	}

	var stop *transfer.StopError
	if !errors.As(got.err, &stop) || stop.Line != 11 || stop.InDoubt || !store.Unavailable(got.err) {
		t.Fatalf("error %v (%T); want a *transfer.StopError at line 11, not in doubt, that store.Unavailable recognises", got.err, got.err)
	}
	for _, want := range []string{"import stopped at line 11", "the database is unavailable", "lines from 11 on were not imported"} {
		if !strings.Contains(got.err.Error(), want) {
			t.Errorf("error %q does not say %q", got.err, want)
		}
	}
	if got.sum.Created != 10 || got.sum.Updated != 0 || len(got.sum.Rejections) != 0 || got.sum.StoppedAt != 11 {
		t.Errorf("summary %v, rejections %v; want the 10 committed lines, no rejection, stopped at line 11", got.sum, got.sum.Rejections)
	}
	if !strings.Contains(got.sum.String(), "; stopped at line 11") {
		t.Errorf("summary %q does not say where the import stopped", got.sum)
	}

	c.Start()
	// The first ten are in, and nothing of the rest.
	all := tenant.WithCompany(ctx, company)
	for i, id := range ids {
		n, err := st.Client.Inventory.Query().Where(inventory.ID(id)).Count(all)
		if err != nil {
			t.Fatalf("after the restart: %v", err)
		}
		switch {
		case i < 10 && n != 1:
			t.Errorf("line %d, committed before the database went down, is missing", i+1)
		case i >= 10 && n != 0:
			t.Errorf("line %d, read after the database went down, was written", i+1)
		}
	}
	// The same store, its connections broken by the restart, goes on.
	sum, err := im.Import(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil || sum.Created != 10 || sum.Unchanged != 10 || sum.Updated != 0 || len(sum.Rejections) != 0 || sum.StoppedAt != 0 {
		t.Errorf("import after the restart: %v (%v), rejections %v; want 10 created, 10 unchanged", sum, err, sum.Rejections)
	}
}

// An import whose context ends stops at the next line, and says it was
// cancelled, not that the database is unavailable.
func TestImportStopsWhenItsContextEnds(t *testing.T) {
	st := testdb.Open(t)
	lines, _ := recordsOf(t, uuid.New(), 5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	im := &transfer.Importer{Client: st.Client, Progress: func(int64) {
		if n++; n == 2 {
			cancel()
		}
	}}
	sum, err := im.Import(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"))
	var stop *transfer.StopError
	if !errors.As(err, &stop) || stop.Line != 3 || !errors.Is(err, context.Canceled) ||
		!strings.Contains(err.Error(), "import stopped at line 3: the import was cancelled") {
		t.Errorf("error %v; want a StopError at line 3 saying the import was cancelled", err)
	}
	if sum.Created != 2 || len(sum.Rejections) != 0 || sum.StoppedAt != 3 {
		t.Errorf("summary %v, rejections %v; want 2 created, none rejected, stopped at line 3", sum, sum.Rejections)
	}
}
