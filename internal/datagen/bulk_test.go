package datagen_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// bulkSize is a slice of the large dataset (`inventoryd generate --companies
// 50 --properties 350 --inventories 3`, the default tree sizes): one company
// of it, about 54,000 rows.
var bulkSize = datagen.Size{Companies: 1, PropertiesPerCompany: 350, InventoriesPerProperty: 3,
	MinEnvironments: 3, MaxEnvironments: 6, MinItems: 3, MaxItems: 7, MaxPhotos: 2}

// BenchmarkBulkLoad reports the generator's write rate (rows/s) for a slice
// of the large dataset into an empty database: SQLite, or PostgreSQL with
// TEST_DATABASE_URL (issue 39: above 50,000 rows/s).
func BenchmarkBulkLoad(b *testing.B) {
	rows := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		st := testdb.Open(b)
		b.StartTimer()
		stats, err := datagen.Load(context.Background(), st.Client, nil, uint64(i+1), bulkSize, datagen.OwnCompanies())
		if err != nil {
			b.Fatal(err)
		}
		rows += stats.Rows()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// The bulk path (COPY on PostgreSQL, prepared multi-row inserts on SQLite)
// stores every field of every row as ent's inserts do, the fields the
// schema's hooks keep (signature sort dates, version, updated_at) included;
// and a signed inventory it wrote is frozen like any other.
func TestBulkLoadStoresWhatEntInsertsStore(t *testing.T) {
	var digests [2][]string
	for run, ctx := range []context.Context{records.EntInserts(context.Background()), context.Background()} {
		counter := &testdb.Counter{InTransactions: true}
		st := testdb.Open(t, counter.Option())
		if _, err := datagen.Load(ctx, st.Client, nil, 7, pastTheBulkThreshold); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"inventories", "environments", "items", "photos"} {
			_, _, quoted := counter.Find(`INTO "` + table + `"`)
			_, _, backquoted := counter.Find("INTO `" + table + "`")
			if ent := quoted || backquoted; ent != (run == 0) {
				t.Errorf("run %d: ent inserted %s: %v, want %v", run, table, ent, run == 0)
			}
		}
		digests[run] = digest(t, st.Client)
	}
	if len(digests[0]) < 500 {
		t.Fatalf("%d rows compared: want a dataset past the bulk threshold", len(digests[0]))
	}
	if diff := cmp.Diff(digests[0], digests[1]); diff != "" {
		t.Errorf("the bulk path stored other rows than ent's inserts (-ent +bulk):\n%s", diff)
	}
}

// pastTheBulkThreshold is 80 inventories in the one batch: every table
// past store.BulkRows, so that every table is written by the bulk path.
var pastTheBulkThreshold = datagen.Size{Companies: 1, PropertiesPerCompany: 40, InventoriesPerProperty: 2,
	MinEnvironments: 2, MaxEnvironments: 4, MinItems: 1, MaxItems: 5, MaxPhotos: 2}

func TestSignedInventoriesOfTheBulkPathAreFrozen(t *testing.T) {
	ctx := allCompanies(context.Background())
	st := testdb.Open(t)
	if _, err := datagen.Load(ctx, st.Client, nil, 7, pastTheBulkThreshold); err != nil {
		t.Fatal(err)
	}
	signed, err := st.Client.Item.Query().Where(item.HasEnvironmentWith(environment.HasInventoryWith(inventory.IsSigned(true)))).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Client.Item.UpdateOneID(signed.ID).SetRating(1).Exec(ctx)
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("changing an item of a signed inventory loaded in bulk: %v, want a conflict", err)
	}
}

// A load into an empty database drops the secondary indexes while it writes
// (store.WithoutSecondaryIndexes) and writes one batch while it generates
// the next: stopped midway, it leaves no row and the schema as migrated;
// finished, the schema as migrated too.
func TestALoadIntoAnEmptyDatabaseLeavesTheSchemaAsMigrated(t *testing.T) {
	ctx := allCompanies(context.Background())
	st := testdb.Open(t)
	migrated := testdb.Schema(t, st.DB())

	stopped, stop := context.WithCancel(ctx)
	defer stop()
	flushes := 0
	_, err := datagen.Load(stopped, st.Client, nil, 7, twoBatches, datagen.OwnCompanies(), datagen.WithProgress(func(datagen.Stats) {
		if flushes++; flushes == 1 {
			stop() // the first batch is being written
		}
	}))
	if err == nil {
		t.Fatal("a load whose context ended midway: no error")
	}
	if n, err := st.Client.Property.Query().Count(ctx); err != nil || n != 0 {
		t.Errorf("after the stopped load: %d properties (%v), want none", n, err)
	}
	if diff := cmp.Diff(migrated, testdb.Schema(t, st.DB())); diff != "" {
		t.Errorf("the stopped load left another schema (-migrated +after):\n%s", diff)
	}

	stats, err := datagen.Load(ctx, st.Client, nil, 7, twoBatches, datagen.OwnCompanies())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(migrated, testdb.Schema(t, st.DB())); diff != "" {
		t.Errorf("the load left another schema (-migrated +after):\n%s", diff)
	}
	if n, err := st.Client.Item.Query().Count(ctx); err != nil || n != stats.Items || n <= store.BatchSize {
		t.Errorf("%d items stored (%v), %d generated: want them all, more than one batch", n, err, stats.Items)
	}
}

// twoBatches is a size whose items fill more than one batch
// (store.BatchSize), so that one is written while the next is generated.
var twoBatches = datagen.Size{Companies: 1, PropertiesPerCompany: 120, InventoriesPerProperty: 2,
	MinEnvironments: 3, MaxEnvironments: 4, MinItems: 3, MaxItems: 5, MaxPhotos: 1}
