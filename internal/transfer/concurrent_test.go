package transfer_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// importRun is one import of a test that runs several at once.
type importRun struct {
	lines []string
	sum   transfer.Summary
	err   error
	// began and ended bound the run, after the store was opened and
	// migrated; writing is closed once its first line is done.
	began, ended time.Time
	writing      chan struct{}
	writingOnce  sync.Once
}

func newImportRun(lines []string) *importRun {
	return &importRun{lines: lines, writing: make(chan struct{})}
}

// run imports the lines through a store of its own, opened and migrated as
// `inventoryd import` does in a process of its own. ready is told once it is
// migrated; the lines start when start is closed, so that runs started
// together begin their lines at the same moment (a migration takes a
// varying time, as long as some imports of 100 lines).
func (r *importRun) run(url string, ready *sync.WaitGroup, start <-chan struct{}) {
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err == nil {
		defer st.Close()
		_, err = st.Migrate(ctx)
	}
	ready.Done()
	<-start
	if r.err = err; err != nil {
		return
	}
	im := &transfer.Importer{Client: st.Client, Progress: func(int64) {
		r.writingOnce.Do(func() { close(r.writing) })
	}}
	r.began = time.Now()
	r.sum, r.err = im.Import(ctx, strings.NewReader(strings.Join(r.lines, "\n")+"\n"))
	r.ended = time.Now()
}

// check fails the test unless every line went in, none rejected.
func (r *importRun) check(t *testing.T, name string, created, updated int) {
	t.Helper()
	if r.err != nil || len(r.sum.Rejections) != 0 || r.sum.Created != created || r.sum.Updated != updated {
		var first []string
		for i, rej := range r.sum.Rejections {
			if i == 3 {
				break
			}
			first = append(first, rej.String())
		}
		t.Errorf("%s: %v (error %v); want %d created, %d updated, none rejected; the first rejections: %s",
			name, r.sum, r.err, created, updated, strings.Join(first, "; "))
	}
}

// overlapped fails the test unless the runs were under way at the same
// time: otherwise it would pass without showing anything. (Under way, not
// writing: SQLite's busy handler polls, so a writer may wait out the other's
// whole run of 100 lines; but it was waiting, where deferred transactions
// failed.)
func overlapped(t *testing.T, a, b *importRun) {
	t.Helper()
	if a.began.IsZero() || b.began.IsZero() || !a.began.Before(b.ended) || !b.began.Before(a.ended) {
		t.Errorf("the writers did not overlap (%s–%s and %s–%s): give them more lines",
			a.began.Format(time.StampMilli), a.ended.Format(time.StampMilli), b.began.Format(time.StampMilli), b.ended.Format(time.StampMilli))
	}
}

// recordsOf returns n valid lines of a company, each a new inventory of a
// new property with two environments, three items and two photos, whose
// materials are new to the database and shared with other companies' lines.
func recordsOf(t *testing.T, company uuid.UUID, n int) (lines []string, inventories []uuid.UUID) {
	t.Helper()
	materials := []string{"Roble", "Porcelanato", "Drywall", "Mármol", "Bambú"}
	for i := range n {
		inv := uuid.New()
		r := minimal(company.String(), inv.String(), uuid.NewString())
		env := func(name string, items ...string) map[string]any {
			var list []any
			for _, it := range items {
				list = append(list, map[string]any{"ItemName": it, "Description": "", "Rating": 4,
					"Material": map[string]any{"MaterialName": materials[(i+len(list))%len(materials)]},
					"Photo":    []any{map[string]any{"StorageReference": uuid.NewString() + ".jpg"}}})
			}
			return map[string]any{"EnvironmentName": name, "Description": "", "Level": 1, "ItemDiagnostic": list}
		}
		r["EnvironmentDiagnostics"] = []any{env("Sala", "Piso", "Muros"), env("Cocina", "Mesón")}
		r["RentalPrice"] = fmt.Sprintf("%d.00", 1_000_000+i)
		lines = append(lines, line(t, r))
		inventories = append(inventories, inv)
	}
	return lines, inventories
}

// holds fails the test unless the company's inventories of st include want,
// each with its two environments, three items and three photos.
func holds(t *testing.T, st *store.Store, company uuid.UUID, want []uuid.UUID) {
	t.Helper()
	ctx := tenant.WithCompany(context.Background(), company)
	ofThem := environment.InventoryIDIn(want...)
	invs, err := st.Client.Inventory.Query().Where(inventory.IDIn(want...)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	envs, err := st.Client.Environment.Query().Where(ofThem).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	items, err := st.Client.Item.Query().Where(item.HasEnvironmentWith(ofThem)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	photos, err := st.Client.Photo.Query().Where(photo.HasItemWith(item.HasEnvironmentWith(ofThem))).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want); invs != n || envs != 2*n || items != 3*n || photos != 3*n {
		t.Errorf("company %s holds %d inventories, %d environments, %d items, %d photos of the lines; want %d, %d, %d, %d",
			company, invs, envs, items, photos, n, 2*n, 3*n, 3*n)
	}
}

// Two imports at once into one database, each through a store of its own as
// two `inventoryd import` processes would, reject nothing: on SQLite each
// line's transaction begins IMMEDIATE and waits for the other writer (within
// the busy timeout) instead of failing at once with "database is locked" on
// its first write (which, with deferred transactions, rejected 24 to 126 of
// these 200 lines a run); on PostgreSQL the two race to insert the same new
// materials, and the loser writes its line again (without that, 1 to 6 lines
// a run were rejected for a duplicate material name). Then an import runs
// beside datagen.Load (what `inventoryd generate` does), which holds SQLite's
// write lock for its whole transaction: both succeed.
//
// 100 lines each is enough for the two to contend throughout, and few enough
// for CI, which runs it under the race detector (where SQLite, a translation
// of C into Go, runs some ten times slower: 22 ms a line).
func TestImportsAtOnceRejectNothing(t *testing.T) {
	const n = 100
	a, b := uuid.New(), uuid.New()
	linesA, idsA := recordsOf(t, a, n)
	linesB, idsB := recordsOf(t, b, n)

	// The schema is there before the imports start, as after the server's
	// first start or `inventoryd migrate`: two first migrations of a new
	// SQLite file at once fail (each finds no table, then one finds the
	// other's), which is the store's to settle, not what this shows.
	url := testdb.URL(t)
	target, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if _, err := target.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	runA, runB := newImportRun(linesA), newImportRun(linesB)
	var wg, ready sync.WaitGroup
	ready.Add(2)
	start := make(chan struct{})
	wg.Go(func() { runA.run(url, &ready, start) })
	wg.Go(func() { runB.run(url, &ready, start) })
	ready.Wait()
	close(start)
	wg.Wait()
	runA.check(t, "import A", n, 0)
	runB.check(t, "import B", n, 0)
	overlapped(t, runA, runB)
	holds(t, target, a, idsA)
	holds(t, target, b, idsB)
	if t.Failed() {
		return
	}

	// Beside the generator, an import that updates the properties of 40 of A's inventories
	// (their property's address changed: a line stated as stored writes
	// nothing). The
	// generator's materials are in already: on PostgreSQL datagen.Load
	// fails when another transaction inserts one of its material names
	// while it runs, which is datagen's to settle, not what this shows.
	if _, err := datagen.Load(context.Background(), target.Client, nil, 3,
		datagen.Size{Companies: 1, PropertiesPerCompany: 1, InventoriesPerProperty: 0}); err != nil {
		t.Fatal(err)
	}
	changed := make([]string, 40)
	for i, l := range linesA[:40] {
		changed[i] = strings.Replace(l, `"Address":"Calle 1 # 2-3"`, `"Address":"Calle 1 # 2-5"`, 1)
	}
	again := newImportRun(changed)
	var generated datagen.Stats
	var genErr error
	gen := newImportRun(nil) // its times only
	ready.Add(1)
	start = make(chan struct{})
	wg.Go(func() { again.run(url, &ready, start) })
	wg.Go(func() {
		<-start
		// Once the import is under way, so that the generator's transaction
		// waits for a line's, and the next lines for it.
		select {
		case <-again.writing:
		case <-time.After(10 * time.Second):
		}
		gen.began = time.Now()
		generated, genErr = datagen.Load(context.Background(), target.Client, nil, 4,
			datagen.Size{Companies: 1, PropertiesPerCompany: 20, InventoriesPerProperty: 3,
				MinEnvironments: 1, MaxEnvironments: 3, MinItems: 1, MaxItems: 3, MaxPhotos: 1})
		gen.ended = time.Now()
	})
	ready.Wait()
	close(start)
	wg.Wait()
	again.check(t, "import beside the generator", 0, len(again.lines))
	if genErr != nil || generated.Inventories != 60 {
		t.Errorf("the generator beside an import: %+v, %v; want 60 inventories", generated, genErr)
	}
	overlapped(t, again, gen)
	holds(t, target, a, idsA)
}
