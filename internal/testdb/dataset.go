package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/store"
)

// Dataset is a database filled once per test process, of which each test
// gets a copy of its own: loading the demo data takes seconds under the race
// detector (SQLite most of all), copying it milliseconds. On SQLite the
// filled file is kept in memory and written to the test's temporary folder;
// on PostgreSQL it is a template database, cloned per test (CREATE DATABASE
// … TEMPLATE) and dropped by Main when the tests end.
type Dataset struct {
	name string
	fill func(ctx context.Context, st *store.Store) error

	once sync.Once
	err  error
	// SQLite: the database file and its write-ahead log (if any was left).
	sqliteFile, sqliteWAL []byte
	// PostgreSQL: the template database.
	template string
	// saveAside and loadAside, when set, carry what the fill stored
	// aside (a FileDataset's files) through the share folder (EnvShare).
	saveAside func() ([]byte, error)
	loadAside func([]byte) error
}

// NewDataset names a dataset and says how to fill it: fill gets a migrated,
// empty store. The name is the dataset's in the share folder (EnvShare)
// too, so no two datasets of the module may have the same.
func NewDataset(name string, fill func(ctx context.Context, st *store.Store) error) *Dataset {
	return &Dataset{name: name, fill: fill}
}

// Open returns a migrated store on a copy of the dataset that lives as long
// as the test; opts apply to the copy only, not to the fill.
func (d *Dataset) Open(tb testing.TB, opts ...store.Option) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), d.URL(tb), opts...)
	if err != nil {
		tb.Fatalf("opening a copy of dataset %s: %v", d.name, err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating a copy of dataset %s: %v", d.name, err)
	}
	return st
}

// URL returns the address of a new database holding a copy of the dataset,
// removed when the test ends.
func (d *Dataset) URL(tb testing.TB) string {
	tb.Helper()
	d.Fill(tb)
	base := os.Getenv(EnvURL)
	if base == "" {
		path := filepath.Join(tb.TempDir(), "test.db")
		if err := os.WriteFile(path, d.sqliteFile, 0o600); err != nil {
			tb.Fatal(err)
		}
		if d.sqliteWAL != nil {
			if err := os.WriteFile(path+"-wal", d.sqliteWAL, 0o600); err != nil {
				tb.Fatal(err)
			}
		}
		return path
	}
	name := newDatabaseName(tb, "t")
	admin := adminDB(tb, base)
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + d.template); err != nil {
		tb.Fatalf("copying dataset %s into database %s on %s: %v", d.name, name, store.Redacted(base), err)
	}
	tb.Cleanup(func() {
		// FORCE: a connection a test left open must not keep the copy.
		if _, err := admin.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`); err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
		}
	})
	return databaseURL(tb, base, name)
}

// Fill fills the dataset, if no test of the process has yet; what the fill
// function stored aside is then ready to read.
func (d *Dataset) Fill(tb testing.TB) {
	tb.Helper()
	quietAudit.Do(func() { slog.SetDefault(slog.New(slog.DiscardHandler)) })
	d.once.Do(func() { d.err = d.build(os.Getenv(EnvURL)) })
	if d.err != nil {
		tb.Fatalf("filling dataset %s: %v", d.name, d.err)
	}
}

// build fills the dataset, or copies it from the share folder (EnvShare)
// when another process of the run has filled it, leaving it there if not.
func (d *Dataset) build(base string) error {
	s := sharedFor(d.name, base)
	if s == nil {
		return d.fillOwn(base, true)
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if done, err := d.copyShared(s, base); done || err != nil {
		return err
	}
	// The template outlives this process: the others clone it after it.
	// It is dropped with the stale ones (dropStale).
	if err := d.fillOwn(base, false); err != nil {
		return err
	}
	return d.share(s, base)
}

// share leaves the filled dataset in the share folder, its mark of
// completion last.
func (d *Dataset) share(s *shared, base string) error {
	if base == "" {
		if err := s.write(".db", d.sqliteFile); err != nil {
			return err
		}
		if d.sqliteWAL != nil {
			if err := s.write(".db-wal", d.sqliteWAL); err != nil {
				return err
			}
		}
	} else if err := s.write(".template", []byte(d.template)); err != nil {
		return err
	}
	if d.saveAside != nil {
		aside, err := d.saveAside()
		if err != nil {
			return err
		}
		if err := s.write(".aside", aside); err != nil {
			return err
		}
	}
	return s.write(".done", nil)
}

// copyShared takes the dataset another process left in the share folder;
// done is false when none has yet.
func (d *Dataset) copyShared(s *shared, base string) (done bool, err error) {
	if _, done, err := s.read(".done"); !done || err != nil {
		return false, err
	}
	if base == "" {
		if d.sqliteFile, _, err = s.read(".db"); err != nil {
			return false, err
		}
		if d.sqliteWAL, _, err = s.read(".db-wal"); err != nil {
			return false, err
		}
	} else {
		name, _, err := s.read(".template")
		if err != nil {
			return false, err
		}
		d.template = string(name)
	}
	if d.loadAside != nil {
		aside, _, err := s.read(".aside")
		if err != nil {
			return false, err
		}
		if err := d.loadAside(aside); err != nil {
			return false, fmt.Errorf("reading the shared dataset %s: %w", s.key, err)
		}
	}
	return true, nil
}

// fillOwn fills the dataset in this process: into a file read into memory
// on SQLite, into a template database on PostgreSQL, dropped when the
// process's tests end (Main) if dropAtEnd.
func (d *Dataset) fillOwn(base string, dropAtEnd bool) error {
	ctx := context.Background()
	var target string
	if base == "" {
		dir, err := os.MkdirTemp("", "testdb-dataset-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		target = filepath.Join(dir, "dataset.db")
		if err := d.fillAt(ctx, target); err != nil {
			return err
		}
		if d.sqliteFile, err = os.ReadFile(target); err != nil {
			return err
		}
		// Closing the last connection checkpoints the log into the file;
		// should one be left, the copy needs it.
		if d.sqliteWAL, err = os.ReadFile(target + "-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if len(d.sqliteWAL) == 0 {
			d.sqliteWAL = nil
		}
		return nil
	}
	admin, err := openAdmin(base)
	if err != nil {
		return err
	}
	dropStale(admin)
	if d.template, err = newTemplateName(); err != nil {
		return err
	}
	if _, err := admin.Exec(`CREATE DATABASE ` + d.template); err != nil {
		return fmt.Errorf("creating template database %s on %s: %v", d.template, store.Redacted(base), err)
	}
	if dropAtEnd {
		templatesMu.Lock()
		templates = append(templates, d.template)
		templatesMu.Unlock()
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%s is not a URL: %v", EnvURL, err)
	}
	u.Path = "/" + d.template
	return d.fillAt(ctx, u.String())
}

// fillAt fills the database at target and closes every connection to it: a
// template with a session open cannot be copied.
func (d *Dataset) fillAt(ctx context.Context, target string) error {
	st, err := store.Open(ctx, target)
	if err != nil {
		return err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return fmt.Errorf("migrating: %w", err)
	}
	if err := d.fill(ctx, st); err != nil {
		st.Close()
		return err
	}
	return st.Close()
}

var (
	templatesMu sync.Mutex
	templates   []string
)

// Main runs the package's tests and then drops the PostgreSQL templates its
// datasets made. A package whose tests use a Dataset calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	templatesMu.Lock()
	defer templatesMu.Unlock()
	if len(templates) == 0 {
		return code
	}
	admin, err := openAdmin(os.Getenv(EnvURL))
	if err != nil {
		fmt.Fprintf(os.Stderr, "testdb: dropping the dataset templates: %v\n", err)
		return code
	}
	for _, name := range templates {
		if _, err := admin.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`); err != nil {
			fmt.Fprintf(os.Stderr, "testdb: dropping template database %s: %v\n", name, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Database names made here start with databasePrefix and the Unix time of
// their making, so that dropStale can tell the ones a killed test process
// (a go test timeout) left behind.
const databasePrefix = "testdb_"

// staleAfter is far longer than any test run: a database that old lost its
// process.
const staleAfter = 6 * time.Hour

func newTemplateName() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%stemplate_%d_%s", databasePrefix, time.Now().Unix(), hex.EncodeToString(b[:])), nil
}

func newDatabaseName(tb testing.TB, kind string) string {
	return fmt.Sprintf("%s%s_%d_%s", databasePrefix, kind, time.Now().Unix(), randomHex(tb))
}

func databaseURL(tb testing.TB, base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s is not a URL: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// dropStale drops what killed test processes left: databases named here
// that are older than staleAfter. Failures are ignored: another process may
// be dropping the same one at the same moment.
func dropStale(admin *sql.DB) {
	rows, err := admin.Query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, databasePrefix+"%")
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) != nil {
			continue
		}
		// testdb_<kind>_<unix seconds>_<hex>
		parts := strings.Split(name, "_")
		if len(parts) != 4 {
			continue
		}
		made, err := strconv.ParseInt(parts[2], 10, 64)
		if err == nil && time.Since(time.Unix(made, 0)) > staleAfter {
			stale = append(stale, name)
		}
	}
	rows.Close()
	for _, name := range stale {
		_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	}
}
