package store_test

import (
	"context"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/propertyrecords/inventory/ent/migrate"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// migrateEnv names the database a helper process migrates.
const migrateEnv = "STORE_TEST_MIGRATE"

// TestMain lets the test binary stand for a second `inventoryd`: run with
// migrateEnv set, it opens that database, waits for its standard input to
// close (so that every process migrates at the same moment), migrates and
// exits 0 on success.
func TestMain(m *testing.M) {
	if path := os.Getenv(migrateEnv); path != "" {
		st, err := store.Open(context.Background(), path)
		if err == nil {
			_, _ = io.Copy(io.Discard, os.Stdin)
			_, err = st.Migrate(context.Background())
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Processes started at once on a fresh SQLite folder (two imports, or a
// server and an import) all migrate: the first creates the schema, and the
// others, waiting their turn, find it made. Without the lock one of them
// failed with `create "api_keys" table: table already exists`.
func TestProcessesMigratingAFreshSQLiteFileAtOnceAllSucceed(t *testing.T) {
	testdb.SQLiteOnly(t)
	for round := range 2 {
		path := filepath.Join(t.TempDir(), "data", "inventory.db")
		const processes = 4
		var cmds []*exec.Cmd
		var starts []io.WriteCloser
		outputs := make([]strings.Builder, processes)
		for i := range processes {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), migrateEnv+"="+path)
			cmd.Stdout, cmd.Stderr = &outputs[i], &outputs[i]
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, starts = append(cmds, cmd), append(starts, in)
		}
		for _, in := range starts {
			in.Close()
		}
		var wg sync.WaitGroup
		errs := make([]error, processes)
		for i, cmd := range cmds {
			wg.Go(func() { errs[i] = cmd.Wait() })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, process %d of %d migrating a fresh file at once: %v: %s", round, i+1, processes, err, outputs[i].String())
			}
		}
		schemaIsEnts(t, path)
	}
}

// schemaIsEnts checks that the file holds each of ent's tables with all
// its columns.
func schemaIsEnts(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range migrate.Tables {
		var columns int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?)`, table.Name).Scan(&columns); err != nil {
			t.Fatal(err)
		}
		if columns != len(table.Columns) {
			t.Errorf("table %s: %d columns, want %d", table.Name, columns, len(table.Columns))
		}
	}
}
