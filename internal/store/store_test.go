package store_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"ariga.io/atlas/sql/migrate"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/migrations"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func newProperty(t *testing.T, ctx context.Context, client *ent.Client, company uuid.UUID) *ent.Property {
	t.Helper()
	p, err := client.Property.Create().SetCompanyID(company).SetAddress("Calle 1 # 2-3").SetCity("Bogotá").SetPropertyType("Casa").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDatabaseRefusesHalfSignedInventories(t *testing.T) {
	ctx := tenant.Unrestricted(context.Background(), "test: writing fixtures")
	st := testdb.Open(t)
	company := uuid.New()
	p := newProperty(t, ctx, st.Client, company)
	now := time.Now().UTC()
	create := func() *ent.InventoryCreate {
		return st.Client.Inventory.Create().SetCompanyID(company).SetPropertyID(p.ID).
			SetInventoryType(inventorytype.Colocacion).SetRentalPrice(decimal.RequireFromString("1500000.50"))
	}
	tests := []struct {
		name   string
		create *ent.InventoryCreate
		ok     bool
	}{
		{"unsigned", create(), true},
		{"signed", create().SetIsSigned(true).SetApprovalCode("APR-1").SetSignatureDate(now), true},
		{"unsigned with an approval code", create().SetApprovalCode("APR-1"), false},
		{"unsigned with a signature date", create().SetSignatureDate(now), false},
		{"signed without an approval code", create().SetIsSigned(true).SetSignatureDate(now), false},
		{"remote-signed but unsigned", create().SetIsRemoteSigned(true), false},
		{"negative price", create().SetRentalPrice(decimal.RequireFromString("-1")), false},
		{"largest price", create().SetRentalPrice(decimal.RequireFromString("9999999999999.99")), true},
		{"price past 15 digits", create().SetRentalPrice(decimal.RequireFromString("10000000000000")), false},
	}
	for _, tt := range tests {
		err := tt.create.Exec(ctx)
		if (err == nil) != tt.ok {
			t.Errorf("%s: got error %v, want success %v", tt.name, err, tt.ok)
		}
	}
}

func TestExactPriceRoundTrips(t *testing.T) {
	ctx := tenant.Unrestricted(context.Background(), "test: writing fixtures")
	st := testdb.Open(t)
	company := uuid.New()
	p := newProperty(t, ctx, st.Client, company)
	for _, price := range []string{"0.10", "1500000.50", "9999999999999.99"} {
		inv, err := st.Client.Inventory.Create().SetCompanyID(company).SetPropertyID(p.ID).
			SetInventoryType(inventorytype.Captacion).SetRentalPrice(decimal.RequireFromString(price)).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		back, err := st.Client.Inventory.Get(tenant.WithCompany(context.Background(), company), inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := back.RentalPrice.StringFixed(2); got != price {
			t.Errorf("price: stored %s, read back %s", price, got)
		}
	}
}

func TestValidatorsRefuseOutOfRangeValues(t *testing.T) {
	ctx := tenant.Unrestricted(context.Background(), "test: writing fixtures")
	st := testdb.Open(t)
	company := uuid.New()
	p := newProperty(t, ctx, st.Client, company)
	err := st.Client.Inventory.Create().SetCompanyID(company).SetPropertyID(p.ID).
		SetInventoryType(inventorytype.Type(4)).SetRentalPrice(decimal.Zero).Exec(ctx)
	if !ent.IsValidationError(err) {
		t.Errorf("inventory type 4: got %v, want a validation error", err)
	}
	err = st.Client.Photo.Create().SetCompanyID(company).SetItemID(uuid.New()).SetStorageReference("../../etc/passwd").Exec(ctx)
	if !ent.IsValidationError(err) {
		t.Errorf("photo reference with a path: got %v, want a validation error", err)
	}
	err = st.Client.Item.Create().SetCompanyID(company).SetEnvironmentID(uuid.New()).SetMaterialID(uuid.New()).
		SetName("Puerta").SetRating(6).Exec(ctx)
	if !ent.IsValidationError(err) {
		t.Errorf("rating 6: got %v, want a validation error", err)
	}
}

func TestClientsCannotWriteAndMustNameACompanyToRead(t *testing.T) {
	st := testdb.Open(t)
	company := uuid.New()
	asCompany := tenant.WithCompany(context.Background(), company)
	err := st.Client.Property.Create().SetCompanyID(company).SetAddress("x").SetCity("x").SetPropertyType("Casa").Exec(asCompany)
	if err == nil {
		t.Error("write as a company: got no error, want it denied (the service is read-only to clients)")
	}
	_, err = st.Client.Property.Query().All(context.Background())
	var appErr *apperr.Error
	if !errors.As(err, &appErr) || appErr.Code != apperr.Unauthenticated {
		t.Errorf("read without a company: got %v, want UNAUTHENTICATED", err)
	}
}

// SQLite runs in the process: its pool holds as many connections as there
// are CPUs (at least 2), not one per concurrent request, and one spare for
// readiness checks.
func TestSQLiteConnectionsAreAsManyAsCPUs(t *testing.T) {
	if testdb.Postgres() {
		t.Skip("SQLite's pool")
	}
	st := testdb.Open(t)
	want := max(2, runtime.GOMAXPROCS(0))
	if got := st.Pool().Size; got != want {
		t.Errorf("pool size: got %d, want %d", got, want)
	}
	if got := st.Stats().MaxOpenConnections; got != want+1 {
		t.Errorf("max open connections: got %d, want %d (the pool and a spare)", got, want+1)
	}
}

// A database written before signature_sort_date_desc existed gets the column
// filled on migration: each signed inventory's signature date, the unsigned
// sentinel for the others. PostgreSQL reapplies the migration file that
// added it (the database is taken back to the version before); SQLite runs
// ent's automatic migration and the store's copy.
func TestMigratingADatabaseFromBeforeTheDescendingSignatureSort(t *testing.T) {
	ctx := tenant.Unrestricted(context.Background(), "test: upgrading a database")
	var counter testdb.Counter
	st := testdb.Open(t, counter.Option())
	if _, err := datagen.Load(ctx, st.Client, nil, datagen.DemoSeed, datagen.Demo); err != nil {
		t.Fatal(err)
	}
	downgrade := []string{
		`DROP INDEX inventory_company_id_signature_sort_date_desc_id`,
		`ALTER TABLE inventories DROP COLUMN signature_sort_date_desc`,
	}
	if testdb.Postgres() {
		dir, err := migrations.Dir()
		if err != nil {
			t.Fatal(err)
		}
		files, err := dir.Files()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(files, func(f migrate.File) bool { return f.Desc() == "signature_sort_date_desc" })
		if i < 0 {
			t.Fatal("no migration named signature_sort_date_desc")
		}
		downgrade = append(downgrade,
			`DROP INDEX inventory_company_id_signature_sort_date_id`,
			`CREATE INDEX inventory_company_id_signature_sort_date ON inventories (company_id, signature_sort_date)`,
			`DELETE FROM schema_migrations WHERE version = '`+files[i].Version()+`'`)
	}
	for _, stmt := range downgrade {
		if err := counter.Driver.Exec(ctx, stmt, []any{}, nil); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	inventories, err := st.Client.Inventory.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var signed, unsigned int
	for _, inv := range inventories {
		want := schema.UnsignedSortDateDesc
		if inv.SignatureDate != nil {
			want = *inv.SignatureDate
			signed++
		} else {
			unsigned++
		}
		if !inv.SignatureSortDateDesc.Equal(want) {
			t.Errorf("inventory %s (signed %v): descending sort date %v, want %v", inv.ID, inv.IsSigned, inv.SignatureSortDateDesc, want)
		}
	}
	if signed == 0 || unsigned == 0 {
		t.Fatalf("%d signed and %d unsigned inventories: want both kinds", signed, unsigned)
	}
}

// TestSQLiteDropsTheIndexesTheSchemaReplaced: an index the schema replaced
// with a wider one (issue 28: every order index ends with the id) is dropped
// when an older SQLite database is opened; PostgreSQL's migration files drop
// them, and internal/migrations holds the files to the schema.
func TestSQLiteDropsTheIndexesTheSchemaReplaced(t *testing.T) {
	if testdb.Postgres() {
		t.Skip("PostgreSQL's indexes are its migration files'")
	}
	ctx := tenant.Unrestricted(context.Background(), "test: upgrading a database")
	var counter testdb.Counter
	st := testdb.Open(t, counter.Option())
	for _, stmt := range []string{
		`DROP INDEX inventory_company_id_created_at_id`,
		`CREATE INDEX inventory_company_id_created_at ON inventories (company_id, created_at)`,
	} {
		if err := counter.Driver.Exec(ctx, stmt, []any{}, nil); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var rows entsql.Rows
	if err := counter.Driver.Query(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'inventories'`, []any{}, &rows); err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	indexes := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes[name] = true
	}
	if indexes["inventory_company_id_created_at"] || !indexes["inventory_company_id_created_at_id"] {
		t.Errorf("indexes after migrating: %v; want inventory_company_id_created_at replaced by inventory_company_id_created_at_id", indexes)
	}
}

// SQLite keeps its per-index statistics but no index samples (sqlite_stat4):
// with samples, every statement whose parameter meets an indexed column is
// planned again at each execution, so the statements the store keeps
// prepared were parsed anew each time. Analyze leaves none, and migrating
// drops those an earlier version's ANALYZE left.
func TestSQLiteKeepsNoIndexSamples(t *testing.T) {
	testdb.SQLiteOnly(t)
	ctx := tenant.Unrestricted(context.Background(), "test: statistics")
	st := testdb.Open(t)
	if _, err := datagen.Load(ctx, st.Client, nil, datagen.DemoSeed, datagen.Demo); err != nil {
		t.Fatal(err)
	}
	statistics := func() (perIndex, samples int) {
		t.Helper()
		if err := st.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM sqlite_stat1), (SELECT COUNT(*) FROM sqlite_stat4)`).Scan(&perIndex, &samples); err != nil {
			t.Fatal(err)
		}
		return perIndex, samples
	}
	if err := st.Analyze(ctx); err != nil {
		t.Fatal(err)
	}
	if perIndex, samples := statistics(); perIndex == 0 || samples != 0 {
		t.Errorf("after Analyze: %d rows of per-index statistics, %d samples; want some and none", perIndex, samples)
	}
	if _, err := st.DB().Exec(`ANALYZE`); err != nil {
		t.Fatal(err)
	}
	if _, samples := statistics(); samples == 0 {
		t.Fatal("SQLite's own ANALYZE kept no samples: this build has no STAT4, and the test shows nothing")
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if perIndex, samples := statistics(); perIndex == 0 || samples != 0 {
		t.Errorf("after migrating: %d rows of per-index statistics, %d samples; want some and none", perIndex, samples)
	}
}
