package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"entgo.io/ent/schema/field"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// treeTables are the tables a generated load writes in bulk.
var treeTables = []string{"properties", "inventories", "environments", "items", "photos"}

// Into empty tables, the secondary indexes (and on PostgreSQL the foreign
// keys) are gone until rebuild, which makes the schema again exactly as it
// was; a row whose parent is missing is still refused, at its insert on
// SQLite and at the rebuild on PostgreSQL, so the load fails whole.
func TestSecondaryIndexesAreDroppedAndRebuiltAsTheyWere(t *testing.T) {
	ctx := context.Background()
	st := testdb.Open(t)
	migrated := testdb.Schema(t, st.DB())

	tx, sqlTx := begin(t, st)
	rebuild, err := store.WithoutSecondaryIndexes(ctx, tx, treeTables...)
	if err != nil {
		t.Fatal(err)
	}
	during := testdb.Schema(t, sqlTx)
	for _, gone := range []string{"item_environment_id_order", "photo_item_id_storage_reference"} {
		if strings.Contains(during, gone) {
			t.Errorf("index %s is still there during the load", gone)
		}
	}
	kept := []string{"photo_storage_reference"}
	if st.Dialect() == dialect.Postgres {
		kept = append(kept, "items_pkey")
	}
	for _, kept := range kept {
		if !strings.Contains(during, kept) {
			t.Errorf("unique index %s was dropped: it must refuse a duplicate as the row is written", kept)
		}
	}
	if err := rebuild(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(migrated, testdb.Schema(t, sqlTx)); diff != "" {
		t.Errorf("the rebuilt schema differs from the migrated one (-migrated +rebuilt):\n%s", diff)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// A row whose environment does not exist.
	tx, sqlTx = begin(t, st)
	rebuild, err = store.WithoutSecondaryIndexes(ctx, tx, treeTables...)
	if err != nil {
		t.Fatal(err)
	}
	material := uuid.New()
	if err := tx.Material.Create().SetID(material).SetName("madera").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO items (id, company_id, name, rating, environment_id, material_id) VALUES (?, ?, 'x', 3, ?, ?)`
	if testdb.Postgres() {
		insert = `INSERT INTO items (id, company_id, name, rating, environment_id, material_id) VALUES ($1, $2, 'x', 3, $3, $4)`
	}
	_, err = sqlTx.ExecContext(ctx, insert, uuid.New(), uuid.New(), uuid.New(), material)
	if err == nil {
		err = rebuild()
	}
	if err == nil || !strings.Contains(err.Error(), "foreign key") && !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Errorf("an item of no environment: %v, want a foreign key's refusal", err)
	}
	_ = tx.Rollback()
	if diff := cmp.Diff(migrated, testdb.Schema(t, st.DB())); diff != "" {
		t.Errorf("a rolled back load left another schema (-migrated +after):\n%s", diff)
	}
}

// Into tables holding rows, nothing is dropped: rebuilding every index of a
// large database to add a few rows would cost more than it saves.
func TestSecondaryIndexesStayWhenTheTablesHoldRows(t *testing.T) {
	ctx := tenant.Unrestricted(context.Background(), "test: a property in the database")
	st := testdb.Open(t)
	migrated := testdb.Schema(t, st.DB())
	if err := st.Client.Property.Create().SetCompanyID(uuid.New()).SetAddress("Calle 1").SetCity("Bogotá").SetPropertyType("Casa").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	tx, sqlTx := begin(t, st)
	defer tx.Rollback()
	rebuild, err := store.WithoutSecondaryIndexes(ctx, tx, treeTables...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(migrated, testdb.Schema(t, sqlTx)); diff != "" {
		t.Errorf("indexes were dropped from tables with rows (-migrated +during):\n%s", diff)
	}
	if err := rebuild(); err != nil {
		t.Fatal(err)
	}
}

func begin(t *testing.T, st *store.Store) (*ent.Tx, *sql.Tx) {
	t.Helper()
	tx, err := st.Client.Tx(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sqlTx, err := tx.SQLTx()
	if err != nil {
		t.Fatal(err)
	}
	return tx, sqlTx
}

// OneInsert makes one statement of several tables' rows on PostgreSQL only,
// and only within a statement's parameters: a lone table is a plain
// insert, several are WITHs of the last, and the arguments follow the
// placeholders' numbers.
func TestOneInsertIsOneStatementWithinPostgreSQLsBounds(t *testing.T) {
	spec := func(table string, id int) *sqlgraph.CreateSpec {
		s := sqlgraph.NewCreateSpec(table, sqlgraph.NewFieldSpec("id", field.TypeInt))
		s.ID.Value = id
		s.SetField("name", field.TypeString, fmt.Sprint(table, id))
		return s
	}
	rows := func(table string, n int) []*sqlgraph.CreateSpec {
		var out []*sqlgraph.CreateSpec
		for i := range n {
			out = append(out, spec(table, i+1))
		}
		return out
	}
	query, args, ok, err := store.OneInsert(dialect.Postgres, rows("a", 1), nil, rows("b", 2), rows("c", 1))
	want := `WITH w0 AS (INSERT INTO "a" ("id", "name") VALUES ($1, $2)), w1 AS (INSERT INTO "b" ("id", "name") VALUES ($3, $4), ($5, $6)) INSERT INTO "c" ("id", "name") VALUES ($7, $8)`
	if err != nil || !ok || query != want {
		t.Errorf("three tables: %v %v\n%s\nwant\n%s", ok, err, query, want)
	}
	if diff := cmp.Diff([]any{1, "a1", 1, "b1", 2, "b2", 1, "c1"}, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if query, _, ok, _ := store.OneInsert(dialect.Postgres, nil, rows("b", 1)); !ok || query != `INSERT INTO "b" ("id", "name") VALUES ($1, $2)` {
		t.Errorf("one table: %v %s", ok, query)
	}
	if _, _, ok, _ := store.OneInsert(dialect.SQLite, rows("a", 1)); ok {
		t.Error("one statement on SQLite, which has no data-modifying WITH")
	}
	if _, _, ok, _ := store.OneInsert(dialect.Postgres, rows("a", store.PostgresMaxParameters/2+1)); ok {
		t.Error("one statement past PostgreSQL's 65,535 parameters")
	}
}
