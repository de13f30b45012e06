package server

import (
	"context"
	"log/slog"
	"testing"

	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The IDE's capture tab makes each item of the material it is made of
// (issue 38): its floor of ceramic, its window of glass, from the demo's
// catalogue, not one material for both.
func TestTheCaptureTabsItemsAreOfTheirMaterials(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	vars := ide.CaptureVariables(ideExamples(ctx, st, slog.New(slog.DiscardHandler)))
	input := vars["input"].(map[string]any)
	items := input["environments"].([]any)[0].(map[string]any)["items"].([]any)
	for _, it := range items {
		item := it.(map[string]any)
		want := map[string]string{"Piso": ide.FloorMaterial, "Ventana": ide.WindowMaterial}[item["name"].(string)]
		m, err := st.Client.Material.Query().Where(material.Name(want)).Only(ctx)
		if err != nil {
			t.Fatalf("the demo's %q: %v", want, err)
		}
		if item["materialId"] != m.ID.String() {
			t.Errorf("the capture tab's %s: material %v; want %s (%s)", item["name"], item["materialId"], want, m.ID)
		}
	}
}
