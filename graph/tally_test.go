package graph_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/migrations"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// The companies' tallies, which a connection over a company's whole table
// reads as its totalCount, hold what counting the rows gives, whichever way
// the rows came: the bulk load, createInventory (sent twice), the import, a
// delete, PostgreSQL's TRUNCATE, and a database from before the tallies,
// counted when it is migrated. A company reads its own tally only: one with
// no rows has a totalCount of 0 while others have theirs.
func TestCompanyTalliesHoldWhatCountingGives(t *testing.T) {
	w := newWrites(t)
	ctx := context.Background()
	requireTalliesCount(t, w.st, "after the bulk load")

	id := uuid.NewString()
	for range 2 { // the second is a phone's retry: nothing new
		if _, errs := w.create(t, w.tree(id, 1, 2)); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	other, errs := w.create(t, w.tree("", 2, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	requireTalliesCount(t, w.st, "after createInventory")
	requireTotalCounts(t, w.srv, w.st)

	// An operator's delete, below the API (which deletes no inventory).
	deleteInventory(t, w.st.DB(), other.ID)
	requireTalliesCount(t, w.st, "after a delete")
	requireTotalCounts(t, w.srv, w.st)

	// The import writes another database's records.
	var exported bytes.Buffer
	if _, err := (&transfer.Exporter{Client: w.st.Client}).Export(ctx, datagen.DemoCompanies[0], &exported); err != nil {
		t.Fatal(err)
	}
	imported := testdb.Open(t)
	if _, err := (&transfer.Importer{Client: imported.Client}).Import(ctx, &exported); err != nil {
		t.Fatal(err)
	}
	requireTalliesCount(t, imported, "after an import")

	// A database from before the tallies is counted when it is migrated.
	forgetTallies(t, w.st)
	if n := tallyRows(t, w.st.DB()); n != 0 {
		t.Fatalf("%d tallies left after forgetting them", n)
	}
	if _, err := w.st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	requireTalliesCount(t, w.st, "after migrating a database without tallies")
	requireTotalCounts(t, w.srv, w.st)

	// ent's automatic migration of SQLite rebuilds a table it changes, and
	// the table's triggers go with it: migrating puts back what is missing
	// and counts again.
	if w.st.Dialect() == "sqlite3" {
		for _, statement := range []string{`DROP TRIGGER inventories_tally_delete`, `UPDATE company_tallies SET inventories = 0`} {
			if _, err := w.st.DB().Exec(statement); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		requireTalliesCount(t, w.st, "after migrating a database that lost a trigger")
	}

	if w.st.Dialect() == "postgres" {
		if _, err := w.st.DB().Exec(`TRUNCATE inventories CASCADE`); err != nil {
			t.Fatal(err)
		}
		requireTalliesCount(t, w.st, "after TRUNCATE")
		requireTotalCounts(t, w.srv, w.st)
	}
}

// requireTalliesCount fails the test unless every company's tally holds its
// numbers of inventories and properties, counted.
func requireTalliesCount(t *testing.T, st *store.Store, when string) {
	t.Helper()
	counted := countsByCompany(t, st.DB(), `SELECT c, SUM(i), SUM(p) FROM (
		SELECT company_id AS c, COUNT(*) AS i, 0 AS p FROM inventories GROUP BY company_id
		UNION ALL SELECT company_id, 0, COUNT(*) FROM properties GROUP BY company_id) AS counted GROUP BY c`)
	tallied := countsByCompany(t, st.DB(), `SELECT id, inventories, properties FROM company_tallies
		WHERE inventories <> 0 OR properties <> 0`)
	if len(counted) == 0 && when == "after the bulk load" {
		t.Fatal("no rows loaded")
	}
	if fmt.Sprint(counted) != fmt.Sprint(tallied) {
		t.Fatalf("%s: the tallies hold %v, counting gives %v", when, tallied, counted)
	}
}

func countsByCompany(t *testing.T, db *sql.DB, query string) map[string][2]int64 {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	counts := map[string][2]int64{}
	for rows.Next() {
		var company string
		var n [2]int64
		if err := rows.Scan(&company, &n[0], &n[1]); err != nil {
			t.Fatal(err)
		}
		counts[company] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}

// requireTotalCounts fails the test unless each demo company's connections
// answer their own numbers of rows, and a company without rows 0.
func requireTotalCounts(t *testing.T, srv *apitest.Server, st *store.Store) {
	t.Helper()
	companies := append([]string{uuid.NewString()}, datagen.DemoCompanies[0].String(), datagen.DemoCompanies[1].String())
	for _, company := range companies {
		var want [2]int
		for i, table := range []string{"inventories", "properties"} {
			if err := st.DB().QueryRow(fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE company_id = %s`, table, placeholder(st)), company).Scan(&want[i]); err != nil {
				t.Fatal(err)
			}
		}
		var got struct {
			Inventories struct{ TotalCount int }
			Properties  struct{ TotalCount int }
			Page        struct{ TotalCount int }
		}
		srv.MustData(t, company, `{ inventories { totalCount } properties { totalCount }
			page: inventories(first: 2, orderBy: {field: CREATED_AT, direction: DESC}) { totalCount edges { node { id } } } }`, nil, &got)
		if got.Inventories.TotalCount != want[0] || got.Page.TotalCount != want[0] || got.Properties.TotalCount != want[1] {
			t.Errorf("company %s: totalCount of inventories %d (in a page %d), of properties %d; want %d and %d",
				company, got.Inventories.TotalCount, got.Page.TotalCount, got.Properties.TotalCount, want[0], want[1])
		}
	}
}

func placeholder(st *store.Store) string {
	if st.Dialect() == "postgres" {
		return "$1"
	}
	return "?"
}

// deleteInventory deletes an inventory and the rows below it.
func deleteInventory(t *testing.T, db *sql.DB, id string) {
	t.Helper()
	for _, statement := range []string{
		`DELETE FROM photos WHERE item_id IN (SELECT id FROM items WHERE environment_id IN (SELECT id FROM environments WHERE inventory_id = $1))`,
		`DELETE FROM items WHERE environment_id IN (SELECT id FROM environments WHERE inventory_id = $1)`,
		`DELETE FROM environments WHERE inventory_id = $1`,
		`DELETE FROM inventories WHERE id = $1`,
	} {
		if _, err := db.Exec(statement, id); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
}

// forgetTallies makes the database one from before the tallies: no table of
// them, no triggers, and (PostgreSQL) no record of their migration.
func forgetTallies(t *testing.T, st *store.Store) {
	t.Helper()
	statements := []string{`DROP TRIGGER inventories_tally_insert`, `DROP TRIGGER inventories_tally_delete`,
		`DROP TRIGGER properties_tally_insert`, `DROP TRIGGER properties_tally_delete`, `DROP TABLE company_tallies`}
	if st.Dialect() == "postgres" {
		statements = []string{`DROP TABLE company_tallies`,
			`DROP FUNCTION company_tallies_add, company_tallies_remove, company_tallies_truncate CASCADE`,
			fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = '%s'`, talliesMigration(t))}
	}
	for _, statement := range statements {
		if _, err := st.DB().Exec(statement); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
}

func tallyRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	err := db.QueryRow(`SELECT COUNT(*) FROM company_tallies`).Scan(&n)
	if err != nil {
		return 0 // no table: none
	}
	return n
}

// talliesMigration is the version of the migration that made the tallies.
func talliesMigration(t *testing.T) string {
	t.Helper()
	dir, err := migrations.Dir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := dir.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Desc() == "company_tallies" {
			return f.Version()
		}
	}
	t.Fatal("no migration named company_tallies")
	return ""
}
