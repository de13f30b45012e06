package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// B4 answers a move-in and its move-out side by side in group B's envelope
// (validated against the OpenAPI document), and refuses what GraphQL refuses
// with the same codes: two properties a 400, another company's a 404.
func TestB4ComparesTwoInventoriesOfAProperty(t *testing.T) {
	st := testdb.Open(t)
	company, other := uuid.New(), uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	_, elsewhere, _ := apitest.ComparisonFixture(t, st.Client, company)
	_, othersMoveOut, _ := apitest.ComparisonFixture(t, st.Client, other)
	a := withDocument(t, apitest.NewServer(t, st, nil))
	path := func(from, to uuid.UUID) string {
		return "/api/v1/inventories/comparison" + query("from", from.String(), "to", to.String(), "x-company-id", company.String())
	}

	res := a.get(t, path(moveIn, moveOut))
	var got struct {
		Success bool
		Data    struct {
			From, To struct {
				InventoryID   string `json:"inventoryId"`
				InventoryType int    `json:"inventoryType"`
			}
			Summary      map[string]int
			Environments []struct {
				Name, Presence string
				Items          []struct {
					Name, Change string
					RatingChange *int `json:"ratingChange"`
				}
			}
		}
	}
	if err := json.Unmarshal(res.body, &got); err != nil || res.status != http.StatusOK || !got.Success {
		t.Fatalf("B4: %d %s", res.status, res.body)
	}
	d := got.Data
	if d.From.InventoryID != moveIn.String() || d.To.InventoryID != moveOut.String() || d.From.InventoryType != 1 || d.To.InventoryType != 3 ||
		d.Summary["worse"] != 1 || d.Summary["added"] != 2 || d.Summary["removed"] != 2 || d.Summary["newlyToRepair"] != 2 ||
		len(d.Environments) != 4 || d.Environments[0].Items[0].Change != "WORSE" || *d.Environments[0].Items[0].RatingChange != -2 {
		t.Errorf("B4: %s", res.body)
	}

	for name, tc := range map[string]struct {
		path   string
		status int
	}{
		"two properties":    {path(moveIn, elsewhere), http.StatusBadRequest},
		"another company's": {path(moveIn, othersMoveOut), http.StatusNotFound},
		"a malformed id":    {"/api/v1/inventories/comparison" + query("from", "x", "to", moveOut.String(), "x-company-id", company.String()), http.StatusBadRequest},
		"no company":        {"/api/v1/inventories/comparison" + query("from", moveIn.String(), "to", moveOut.String()), http.StatusBadRequest},
	} {
		if res := a.get(t, tc.path); res.status != tc.status {
			t.Errorf("%s: %d %s, want %d", name, res.status, res.body, tc.status)
		}
	}
}

// B4's PDF shows the changes: the worsened floor with both its ratings, the
// change named, the summary, and the page count; refused as B4 is.
func TestB4ComparisonPDFShowsBothRatingsOfAChangedItem(t *testing.T) {
	st := testdb.Open(t)
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	_, elsewhere, _ := apitest.ComparisonFixture(t, st.Client, company)
	a := withDocument(t, apitest.NewServer(t, st, nil))
	path := func(from, to uuid.UUID) string {
		return "/api/v1/inventories/comparison/pdf" + query("from", from.String(), "to", to.String(), "x-company-id", company.String())
	}
	res := a.get(t, path(moveIn, moveOut))
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/pdf" ||
		!strings.HasPrefix(res.header.Get("Repr-Digest"), "sha-256=:") || !strings.HasPrefix(res.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("B4 PDF: %d %v", res.status, res.header)
	}
	text := pdfText(t, res.body)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{"Comparación de inventarios", "piso", "4/5", "2/5 R", "empeoró", "mejoró", "ya no está", "nuevo",
		"1 empeoró", "2 nuevos", "página 1 de", "Cocina (nivel 1) - solo después", "Baño (nivel 1) - solo antes"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the comparison PDF lacks %q:\n%.1500s", want, flat)
		}
	}
	if res := a.get(t, path(moveIn, elsewhere)); res.status != http.StatusBadRequest {
		t.Errorf("two properties: %d, want 400", res.status)
	}
}

// B4's PDF names who signed each side, and keeps beside the collapsed
// unchanged items one photo of each as the earlier inventory recorded it
// (the door that did not change), listed with its SHA-256 like the others.
func TestB4ComparisonPDFNamesBothSidesSignersAndKeepsABeforePhotoOfWhatDidNotChange(t *testing.T) {
	st := testdb.Open(t)
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	ctx := tenant.Unrestricted(context.Background(), "test: signatures of a comparison")
	signed := time.Date(2025, 3, 4, 15, 0, 0, 0, time.UTC)
	if err := st.Client.Inventory.UpdateOneID(moveIn).SetAgentSignatureDate(signed).SetAgentSignerName("Ana Gómez").
		SetOwnerSignatureDate(signed).SetOwnerSignerName("Luis Pérez").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Client.Inventory.UpdateOneID(moveOut).SetAgentSignatureDate(signed).SetAgentSignerName("Marta Ruiz").
		SetTenantSignatureDate(signed).SetTenantSignerName("Jorge Díaz").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	door, err := st.Client.Photo.Query().Where(photo.HasItemWith(item.Name("Puerta"),
		item.HasEnvironmentWith(environment.InventoryID(moveIn)))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := withDocument(t, apitest.NewServer(t, st, nil))
	res := a.get(t, "/api/v1/inventories/comparison/pdf"+query("from", moveIn.String(), "to", moveOut.String(), "x-company-id", company.String()))
	if res.status != http.StatusOK {
		t.Fatalf("B4 PDF: %d %s", res.status, res.body)
	}
	flat := strings.Join(strings.Fields(pdfText(t, res.body)), " ")
	for _, want := range []string{"por el agente Ana Gómez y el propietario Luis Pérez",
		"por el agente Marta Ruiz y el arrendatario Jorge Díaz", "Sin cambio (2): Puerta, VENTANA",
		// its caption (the name cut to its column) under it, and the list
		"Puerta antes: " + door.StorageReference[:6], door.StorageReference + " (no registrado)"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the comparison PDF lacks %q:\n%.3000s", want, flat)
		}
	}
}
