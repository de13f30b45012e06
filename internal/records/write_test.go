package records_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// An API write's tree goes to PostgreSQL as one statement (store.OneInsert:
// the inventory, its rooms and its items, each table a data-modifying
// WITH) and stores what ent's inserts store: the same tree written both
// ways, on two copies of the demo records, reads back as the same rows.
func TestATreeWrittenAsOneStatementStoresWhatEntInsertsStore(t *testing.T) {
	var written [2][]string
	id := uuid.New() // the same tree both times: its children's ids derive from it
	for run, how := range []func(context.Context) context.Context{records.EntInserts, func(ctx context.Context) context.Context { return ctx }} {
		counter := &testdb.Counter{InTransactions: true}
		st := testdb.DemoRecords.Open(t, counter.Option())
		ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
		tree := sampleTree(t, st.Client, ctx, id)
		svc := records.NewService(st.Client, st, slog.New(slog.DiscardHandler), nil, nil, false)
		counter.Reset()
		if _, err := svc.Create(how(ctx), tree); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		statement, _, one := counter.Find(`WITH w0 AS (INSERT INTO "inventories"`)
		if want := run == 1 && st.Dialect() == dialect.Postgres; one != want {
			t.Errorf("run %d on %s: the tree as one statement: %v, want %v (statements:\n%s)", run, st.Dialect(), one, want, counter.Statements())
		}
		if one {
			for _, table := range []string{`INSERT INTO "environments"`, `INSERT INTO "items"`} {
				if _, _, apart := counter.Find(table + " ("); apart && !strings.Contains(statement, table) {
					t.Errorf("%s was written apart from the tree's statement", table)
				}
			}
		}
		written[run] = rowsOf(t, st.Client, ctx, tree.ID)
	}
	if len(written[0]) < 1+3+7 {
		t.Fatalf("%d rows read back: want the inventory, 3 rooms and 7 items", len(written[0]))
	}
	if diff := cmp.Diff(written[0], written[1]); diff != "" {
		t.Errorf("one statement stored other rows than ent's inserts (-ent +one statement):\n%s", diff)
	}
}

// sampleTree is an inventory of 3 rooms and 7 items, one room empty, with
// every optional field given somewhere and absent elsewhere, on the
// company's first property and materials.
func sampleTree(t *testing.T, client *ent.Client, ctx context.Context, id uuid.UUID) *records.Inventory {
	t.Helper()
	prop, err := client.Property.Query().Order(ent.Asc(property.FieldID)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mats, err := client.Material.Query().Order(ent.Asc(material.FieldID)).Limit(2).All(ctx)
	if err != nil || len(mats) < 2 {
		t.Fatalf("materials: %d, %v", len(mats), err)
	}
	deposit, order := decimal.RequireFromString("1250000.50"), 2
	item := func(name string, m int, rating int, order *int, repair bool) records.Item {
		return records.Item{Name: name, Description: "estado de " + name, MaterialID: mats[m].ID, Rating: rating, Order: order, ToRepair: repair}
	}
	return &records.Inventory{
		ID: id, PropertyID: prop.ID, Type: inventorytype.Captacion,
		RentalPrice: decimal.RequireFromString("2500000.75"), Deposit: &deposit, Currency: "COP",
		CreatedAt: time.Date(2026, 11, 28, 10, 30, 0, 123_000_000, time.UTC),
		Environments: []records.Environment{
			{Name: "Sala", Description: "sala comedor", Level: 1, Order: 1, Items: []records.Item{
				item("Piso", 0, 4, &order, false), item("Muros", 1, 2, nil, true), item("Ventana", 0, 5, nil, false)}},
			{Name: "Cocina", Level: 1, Order: 2, Items: []records.Item{
				item("Mesón", 1, 3, &order, true), item("Estufa", 0, 1, nil, true), item("Grifo", 1, 5, nil, false), item("Puerta", 0, 4, nil, false)}},
			{Name: "Patio", Level: 1, Order: 3},
		},
	}
}

// rowsOf reads back an inventory's rows, each as JSON, its id and its
// children's ids left in: the same tree written twice gives the same ids.
func rowsOf(t *testing.T, client *ent.Client, ctx context.Context, id uuid.UUID) []string {
	t.Helper()
	inv, err := client.Inventory.Query().Where(inventory.ID(id)).
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.Order(ent.Asc(environment.FieldID)).WithItems(func(q *ent.ItemQuery) { q.Order(ent.Asc(item.FieldID)) })
		}).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	row := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		delete(fields, "edges")
		b, _ = json.Marshal(fields)
		out = append(out, string(b))
	}
	row(inv)
	for _, env := range inv.Edges.Environments {
		row(env)
		for _, it := range env.Edges.Items {
			row(it)
		}
	}
	return out
}
