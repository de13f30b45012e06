package records_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
)

// One rule, each caller's names: the import, the API and the generator
// meet the same checks, and each error names the field as its caller wrote
// it.
func TestOneRuleNamesTheFieldInEachCallersTerms(t *testing.T) {
	importNames := &records.Names{Environments: "EnvironmentDiagnostics", Items: "ItemDiagnostic", Rating: "Rating",
		Level: "Level", EnvironmentName: "EnvironmentName", ItemName: "ItemName", MaterialName: "Material.MaterialName"}
	tree := func(rating, level int) *records.Inventory {
		return &records.Inventory{ID: uuid.New(), Type: inventorytype.Captacion, RentalPrice: decimal.New(1, 0), Currency: "COP",
			Environments: []records.Environment{
				{Name: "Sala", Level: 1, Items: []records.Item{{Name: "Piso", MaterialID: uuid.New(), Rating: 3}}},
				{Name: "Cocina", Level: level, Items: []records.Item{{Name: "Mesón", MaterialID: uuid.New(), Rating: rating}}},
			}}
	}
	for _, tt := range []struct {
		tree         *records.Inventory
		api, import_ string
	}{
		{tree(6, 1), "environments[1].items[0].rating", "EnvironmentDiagnostics[1].ItemDiagnostic[0].Rating"},
		{tree(3, 3), "environments[1].level", "EnvironmentDiagnostics[1].Level"},
	} {
		api := records.Validate(tt.tree, 2, records.APINames)
		imp := records.Validate(tt.tree, 2, importNames)
		if api == nil || imp == nil || api.Field != tt.api || imp.Field != tt.import_ || api.Message != imp.Message {
			t.Errorf("got %v and %v; want the same refusal on %s and %s", api, imp, tt.api, tt.import_)
		}
	}
	ok := tree(5, 2)
	if err := records.Validate(ok, 2, records.APINames); err != nil {
		t.Errorf("a valid tree: %v", err)
	}
	// Children without ids get ids derived from their parent's and their
	// place: the same tree again names the same records.
	again := tree(5, 2)
	again.ID = ok.ID
	records.Validate(again, 2, records.APINames)
	if ok.Environments[1].Items[0].ID == uuid.Nil || again.Environments[1].Items[0].ID != ok.Environments[1].Items[0].ID {
		t.Errorf("derived ids: %s and %s, want the same", ok.Environments[1].Items[0].ID, again.Environments[1].Items[0].ID)
	}
}
