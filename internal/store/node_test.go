package store_test

import (
	"context"
	"maps"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// TestNodeTablesFindEachIdInItsTable: ids of every table, of both demo
// companies, are each found in their own table, whatever company asks (it
// reveals a table, never a record); ids of no record are not found; an
// empty list reads nothing; and a caller of no company is refused.
func TestNodeTablesFindEachIdInItsTable(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	all := tenant.Unrestricted(context.Background(), "test: the ids of every table")
	want := map[uuid.UUID]string{}
	for table, ids := range map[string]func() ([]uuid.UUID, error){
		"properties":   func() ([]uuid.UUID, error) { return st.Client.Property.Query().Limit(3).IDs(all) },
		"inventories":  func() ([]uuid.UUID, error) { return st.Client.Inventory.Query().Limit(3).IDs(all) },
		"environments": func() ([]uuid.UUID, error) { return st.Client.Environment.Query().Limit(3).IDs(all) },
		"items":        func() ([]uuid.UUID, error) { return st.Client.Item.Query().Limit(40).IDs(all) },
		"photos":       func() ([]uuid.UUID, error) { return st.Client.Photo.Query().Limit(3).IDs(all) },
		"materials":    func() ([]uuid.UUID, error) { return st.Client.Material.Query().Limit(3).IDs(all) },
	} {
		got, err := ids()
		if err != nil || len(got) == 0 {
			t.Fatalf("%s: %v, %v", table, got, err)
		}
		for _, id := range got {
			want[id] = table
		}
	}
	asked := []uuid.UUID{uuid.New(), uuid.New()}
	for id := range want {
		asked = append(asked, id)
	}
	for _, company := range datagen.DemoCompanies[:2] {
		got, err := st.NodeTables(tenant.WithCompany(context.Background(), company), asked)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("asked by %s: %d ids found, want %d: %v", company, len(got), len(want), got)
		}
	}
	if got, err := st.NodeTables(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]), nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
	if got, err := st.NodeTables(context.Background(), asked); err == nil {
		t.Errorf("a caller of no company was answered: %v", got)
	}
}
