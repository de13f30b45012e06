package apitest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// roomFixture is an environment of a fixture inventory: its items by name
// with rating and to-repair flag, in order.
type roomFixture struct {
	name  string
	level int
	items []itemFixture
}

type itemFixture struct {
	name     string
	rating   int
	toRepair bool
}

// ComparisonFixture writes a move-in and a move-out of one property of
// company, and returns their ids. The names differ in case, accents and
// spaces where the same room or item is meant. Compared, the move-out has
// 3 items unchanged, 1 worse (the living room's floor, 4 to 2, now to
// repair), 1 better, 2 added (one to repair) and 2 removed.
func ComparisonFixture(t testing.TB, client *ent.Client, company uuid.UUID) (moveIn, moveOut, property uuid.UUID) {
	t.Helper()
	f := newFixture(t, client, company)
	moveIn = f.inventory(inventorytype.Colocacion, []roomFixture{
		{"Sala", 1, []itemFixture{{"Piso", 4, false}, {"Puerta", 5, false}, {"Ventana", 3, false}, {"Ventana", 4, false}, {"Lámpara", 4, false}}},
		{"Habitación", 2, []itemFixture{{"Cama", 5, false}}},
		{"Baño", 1, []itemFixture{{"Lavamanos", 4, false}}},
	})
	moveOut = f.inventory(inventorytype.Desocupacion, []roomFixture{
		{"sala ", 1, []itemFixture{{"piso", 2, true}, {"Puerta", 5, false}, {"Ventana", 5, false}, {"VENTANA", 4, false}, {"Cortina", 3, true}}},
		{"Habitacion", 2, []itemFixture{{"Cama", 5, false}}},
		{"Cocina", 1, []itemFixture{{"Estufa", 4, false}}},
	})
	return moveIn, moveOut, f.property
}

// LargeComparisonFixture writes a move-in and a move-out of rooms x items
// each (one photo per item), where every third item got worse.
func LargeComparisonFixture(t testing.TB, client *ent.Client, company uuid.UUID, rooms, items int) (moveIn, moveOut uuid.UUID) {
	t.Helper()
	f := newFixture(t, client, company)
	in, out := make([]roomFixture, rooms), make([]roomFixture, rooms)
	for r := range rooms {
		name := fmt.Sprintf("Habitación %d", r+1)
		in[r], out[r] = roomFixture{name, 1, nil}, roomFixture{name, 1, nil}
		for i := range items {
			item := fmt.Sprintf("Elemento %d", i+1)
			in[r].items = append(in[r].items, itemFixture{item, 5, false})
			out[r].items = append(out[r].items, itemFixture{item, 5 - 2*btoi(i%3 == 0), i%3 == 0})
		}
	}
	return f.inventory(inventorytype.Colocacion, in), f.inventory(inventorytype.Desocupacion, out)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fixture writes inventories of one property of one company.
type fixture struct {
	t        testing.TB
	ctx      context.Context
	client   *ent.Client
	company  uuid.UUID
	property uuid.UUID
	material uuid.UUID
}

func newFixture(t testing.TB, client *ent.Client, company uuid.UUID) *fixture {
	t.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test: comparison fixture")
	p, err := client.Property.Create().SetCompanyID(company).SetAddress("Calle 5 # 10-20").SetCity("Cali").SetPropertyType("Apartamento").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	material, err := client.Material.Create().SetName("Material " + uuid.NewString()[:8]).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, client: client, company: company, property: p.ID, material: material.ID}
}

// inventory writes one inventory of the fixture's property: its rooms in
// order, each item with a description and one photo.
func (f *fixture) inventory(kind inventorytype.Type, rooms []roomFixture) uuid.UUID {
	t, ctx, client, company := f.t, f.ctx, f.client, f.company
	t.Helper()
	inv, err := client.Inventory.Create().SetCompanyID(company).SetPropertyID(f.property).SetInventoryType(kind).
		SetRentalPrice(decimal.RequireFromString("1500000")).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for e, room := range rooms {
		env, err := client.Environment.Create().SetCompanyID(company).SetInventoryID(inv.ID).
			SetName(room.name).SetLevel(room.level).SetOrder(e).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range room.items {
			item, err := client.Item.Create().SetCompanyID(company).SetEnvironmentID(env.ID).SetMaterialID(f.material).
				SetName(it.name).SetRating(it.rating).SetToRepair(it.toRepair).SetOrder(i).
				SetDescription(it.name + " en " + room.name).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Photo.Create().SetCompanyID(company).SetItemID(item.ID).SetStorageReference(uuid.NewString() + ".jpg").Save(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return inv.ID
}
