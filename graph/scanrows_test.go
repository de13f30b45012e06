package graph_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The rows of a statement are scanned into the same destinations, one row
// after another (ent/template/scan_row.tmpl): each node read in a list is
// the node read alone, nulls and all (a NULL after a value, a value after a
// NULL), every field, on every table a tree has.
func TestRowsReadTogetherAreTheRowsReadAlone(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	ctx := tenant.Unrestricted(context.Background(), "test: rows read together and alone")

	inventories, err := st.Client.Inventory.Query().Order(ent.Asc(inventory.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAlone(t, inventories, func(n *ent.Inventory) uuid.UUID { return n.ID }, func(id uuid.UUID) (*ent.Inventory, error) {
		return st.Client.Inventory.Get(ctx, id)
	})
	withDeposit, signed := 0, 0
	for _, listed := range inventories {
		if listed.Deposit != nil {
			withDeposit++
		}
		if listed.SignatureDate != nil {
			signed++
		}
	}
	// Nullable columns of both kinds in one list, or the test shows nothing.
	if len(inventories) < 10 || withDeposit == 0 || withDeposit == len(inventories) || signed == 0 || signed == len(inventories) {
		t.Fatalf("%d inventories, %d with a deposit, %d signed: want some of each and some without", len(inventories), withDeposit, signed)
	}

	items, err := st.Client.Item.Query().Order(ent.Asc(item.FieldID)).Limit(300).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameAlone(t, items, func(n *ent.Item) uuid.UUID { return n.ID }, func(id uuid.UUID) (*ent.Item, error) {
		return st.Client.Item.Get(ctx, id)
	})
}

// sameAlone fails t unless each node of listed has the fields of the node
// get reads alone (one row, one statement) for its id.
func sameAlone[N any](t *testing.T, listed []*N, idOf func(*N) uuid.UUID, get func(uuid.UUID) (*N, error)) {
	t.Helper()
	for _, n := range listed {
		alone, err := get(idOf(n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(nodeFields(n), nodeFields(alone)) {
			t.Fatalf("%s read in a list:\n%+v\nread alone:\n%+v", idOf(n), nodeFields(n), nodeFields(alone))
		}
	}
}

// nodeFields is a node's exported fields, without its edges and config.
func nodeFields[N any](n *N) map[string]any {
	v := reflect.ValueOf(n).Elem()
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.IsExported() && f.Name != "Edges" {
			out[f.Name] = v.Field(i).Interface()
		}
	}
	return out
}
