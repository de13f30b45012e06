package migrations_test

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"

	"ariga.io/atlas/sql/migrate"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/migrations"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func requirePostgres(t *testing.T) string {
	t.Helper()
	url := os.Getenv(testdb.EnvURL)
	if url == "" {
		t.Skip("versioned migrations are PostgreSQL's: set " + testdb.EnvURL)
	}
	return url
}

// The migration files must produce exactly the ent schema: CI fails here when
// someone changes ent/schema without writing the next migration.
func TestMigrationFilesMatchTheEntSchema(t *testing.T) {
	server := requirePostgres(t)
	dir := committedDir(t)
	before := names(t, dir)
	wrote, err := migrations.Plan(context.Background(), server, dir, "check")
	if err != nil {
		t.Fatal(err)
	}
	if wrote {
		t.Fatalf("ent/schema and %s disagree: run `go run ./internal/migrations/gen NAME` and commit the file. Missing:\n%s",
			migrations.Folder, written(t, dir, before))
	}
}

// A CHECK constraint whose name stays but whose expression changes is drift
// too: here the files widen item_rating_range to 1-6 while the ent schema
// keeps 1-5, and the check must ask for the constraint back (a by-name
// comparison would see nothing).
func TestDriftCheckNoticesAChangedCheckExpression(t *testing.T) {
	server := requirePostgres(t)
	dir := committedDir(t)
	if err := dir.WriteFile("99990101000000_widen_rating.sql", []byte(`-- Modify "items" table
ALTER TABLE "items" DROP CONSTRAINT "item_rating_range", ADD CONSTRAINT "item_rating_range" CHECK ((rating >= 1) AND (rating <= 6));
`)); err != nil {
		t.Fatal(err)
	}
	writeSum(t, dir, dir)
	before := names(t, dir)
	wrote, err := migrations.Plan(context.Background(), server, dir, "check")
	if err != nil {
		t.Fatal(err)
	}
	if !wrote {
		t.Fatal("the files' item_rating_range allows 1 to 6 and the ent schema's 1 to 5, and the check reported no difference")
	}
	got := written(t, dir, before)
	if !strings.Contains(got, `"item_rating_range"`) || !strings.Contains(got, "rating <= 5") {
		t.Errorf("the planned migration does not restore item_rating_range to 1-5:\n%s", got)
	}
}

// committedDir copies the embedded migration files and their atlas.sum into a
// directory of the test's own.
func committedDir(t *testing.T) *migrate.MemDir {
	t.Helper()
	embedded := mustDir(t)
	dir := &migrate.MemDir{}
	files, err := embedded.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := dir.WriteFile(f.Name(), f.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	writeSum(t, dir, embedded)
	return dir
}

// writeSum writes the atlas.sum of from's files into dir.
func writeSum(t *testing.T, dir migrate.Dir, from migrate.Dir) {
	t.Helper()
	sum, err := from.Checksum()
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate.WriteSumFile(dir, sum); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir migrate.Dir) []string {
	t.Helper()
	files, err := dir.Files()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	return names
}

// written returns the text of the files in dir that are not in before.
func written(t *testing.T, dir migrate.Dir, before []string) string {
	t.Helper()
	files, err := dir.Files()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range files {
		if !slices.Contains(before, f.Name()) {
			text.Write(f.Bytes())
		}
	}
	return text.String()
}

func TestApplyFromEmpty(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	url := testdb.URL(t) // an empty schema of its own
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, _ := mustDir(t).Files()
	applied, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(files) || applied[0] != files[0].Version() {
		t.Fatalf("applied %v to an empty database, want all %d files", applied, len(files))
	}
	again, err := st.Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %v (err %v), want nothing", again, err)
	}
	// The migrated database takes and returns a record through ent.
	company := uuid.New()
	write := tenant.Unrestricted(ctx, "test: a record in the migrated database")
	p, err := st.Client.Property.Create().SetCompanyID(company).SetAddress("Calle 1").SetCity("Cali").SetPropertyType("Casa").Save(write)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Client.Property.Get(tenant.WithCompany(ctx, company), p.ID); err != nil || got.City != "Cali" {
		t.Fatalf("reading back: %v, %v", got, err)
	}

	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var recorded []string
	rows, err := db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		rows.Scan(&v)
		recorded = append(recorded, v)
	}
	if !slices.Equal(recorded, applied) {
		t.Errorf("schema_migrations holds %v, want %v", recorded, applied)
	}

	// A file changed after it was applied, or a migration unknown to this
	// build, stops the service from starting on that database.
	var hash string
	if err := db.QueryRow(`SELECT hash FROM schema_migrations WHERE version = $1`, applied[0]).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	setHash := func(h string) {
		if _, err := db.Exec(`UPDATE schema_migrations SET hash = $1 WHERE version = $2`, h, applied[0]); err != nil {
			t.Fatal(err)
		}
	}
	setHash("changed")
	if _, err := st.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Errorf("a changed file: got %v", err)
	}
	setHash(hash)
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, description, hash) VALUES ('99990101000000', 'future', 'x')`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("a migration from a newer build: got %v", err)
	}
}

func mustDir(t *testing.T) migrate.Dir {
	t.Helper()
	dir, err := migrations.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// River's job tables come with the service's migrations: after an upgrade of
// River, its new versions need their files (`go run ./internal/migrations/gen
// -river`), or the new River would find its tables older than it.
func TestEveryRiverVersionHasAMigrationFile(t *testing.T) {
	dir, err := migrations.Dir()
	if err != nil {
		t.Fatal(err)
	}
	last, err := migrations.LastRiverVersion(dir)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := migrations.RiverVersions()
	if err != nil {
		t.Fatal(err)
	}
	if newest := versions[len(versions)-1].Version; last != newest {
		t.Fatalf("River's newest migration is %03d, the files end at %03d: run `go run ./internal/migrations/gen -river` and commit the files", newest, last)
	}
}
