package testdb_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

var (
	fills      atomic.Int32
	twoRecords = testdb.NewDataset("two properties", func(ctx context.Context, st *store.Store) error {
		fills.Add(1)
		_, err := datagen.Load(ctx, st.Client, nil, 1, datagen.Size{Companies: 1, PropertiesPerCompany: 2})
		return err
	})
)

// A dataset is filled once per process, and each test's copy is its own:
// what one test writes, the next copy does not hold.
func TestDatasetCopiesAreFilledOnceAndIndependent(t *testing.T) {
	first := twoRecords.Open(t)
	ctx := tenant.Unrestricted(context.Background(), "test: counting a dataset's copies")
	if n := first.Client.Property.Query().CountX(ctx); n != 2 {
		t.Fatalf("the first copy holds %d properties, want 2", n)
	}
	first.Client.Property.Delete().ExecX(ctx)
	second := twoRecords.Open(t)
	if n := second.Client.Property.Query().CountX(ctx); n != 2 {
		t.Errorf("a copy made after another copy was emptied holds %d properties, want 2", n)
	}
	if n := fills.Load(); n != 1 && !(n == 0 && os.Getenv(testdb.EnvShare) != "") {
		t.Errorf("the dataset was filled %d times, want once (or by another process of the run, through %s)", n, testdb.EnvShare)
	}
}

// With a share folder, the first process to need a dataset fills it and
// the others copy what it left: two Dataset values of one name stand for
// two test processes of one run.
func TestASharedDatasetIsFilledByTheFirstProcessOnly(t *testing.T) {
	t.Setenv(testdb.EnvShare, t.TempDir())
	var filled atomic.Int32
	name := "shared by two processes " + t.Name()
	for process := range 2 {
		d := testdb.NewDataset(name, func(ctx context.Context, st *store.Store) error {
			filled.Add(1)
			_, err := datagen.Load(ctx, st.Client, nil, 1, datagen.Size{Companies: 1, PropertiesPerCompany: 3})
			return err
		})
		st := d.Open(t)
		ctx := tenant.Unrestricted(context.Background(), "test: counting a shared dataset's copy")
		if n := st.Client.Property.Query().CountX(ctx); n != 3 {
			t.Errorf("process %d's copy holds %d properties, want 3", process, n)
		}
	}
	if n := filled.Load(); n != 1 {
		t.Errorf("the dataset was filled %d times by two processes sharing it, want once", n)
	}
}
