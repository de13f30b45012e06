package apitest

import (
	"context"
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
// spaces where the same room or item is meant.
func ComparisonFixture(t testing.TB, client *ent.Client, company uuid.UUID) (moveIn, moveOut, property uuid.UUID) {
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
	write := func(kind inventorytype.Type, rooms []roomFixture) uuid.UUID {
		inv, err := client.Inventory.Create().SetCompanyID(company).SetPropertyID(p.ID).SetInventoryType(kind).
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
				item, err := client.Item.Create().SetCompanyID(company).SetEnvironmentID(env.ID).SetMaterialID(material.ID).
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
	moveIn = write(inventorytype.Colocacion, []roomFixture{
		{"Sala", 1, []itemFixture{{"Piso", 4, false}, {"Puerta", 5, false}, {"Ventana", 3, false}, {"Ventana", 4, false}, {"Lámpara", 4, false}}},
		{"Habitación", 2, []itemFixture{{"Cama", 5, false}}},
		{"Baño", 1, []itemFixture{{"Lavamanos", 4, false}}},
	})
	moveOut = write(inventorytype.Desocupacion, []roomFixture{
		{"sala ", 1, []itemFixture{{"piso", 2, true}, {"Puerta", 5, false}, {"Ventana", 5, false}, {"VENTANA", 4, false}, {"Cortina", 3, true}}},
		{"Habitacion", 2, []itemFixture{{"Cama", 5, false}}},
		{"Cocina", 1, []itemFixture{{"Estufa", 4, false}}},
	})
	return moveIn, moveOut, p.ID
}
