package rest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// Both PDFs print the management company's name above their title and the
// deposit as people read money: the signed PDF from the record
// (signedpdf.Document, the one place a record becomes a report) under the
// rent, and B4's comparison PDF in its header.
func TestBothPDFsShowTheCompanysNameAndTheDeposit(t *testing.T) {
	st := testdb.Open(t)
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	ctx := tenant.Unrestricted(context.Background(), "test: a named company and its deposits")
	deposit := decimal.RequireFromString("1800000.50")
	for _, id := range []uuid.UUID{moveIn, moveOut} {
		if err := st.Client.Inventory.UpdateOneID(id).SetDeposit(deposit).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const name = "Inmobiliaria Los Andes S.A.S."
	if err := records.NameCompany(ctx, st.Client, company, name); err != nil {
		t.Fatal(err)
	}
	wants := []string{name, "Depósito: $ 1.800.000,50 COP"}

	doc, err := signedpdf.Document(tenant.WithCompany(context.Background(), company), st.Client, apitest.Files(t), moveIn)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := report.Render(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(pdfText(t, signed)), " ")
	for _, want := range append(wants, "Canon de arrendamiento: $ 1.500.000 COP "+wants[1]) {
		if !strings.Contains(text, want) {
			t.Errorf("the signed PDF lacks %q:\n%.1500s", want, text)
		}
	}
	if !strings.Contains(text, name+" Inventario de colocación") {
		t.Errorf("the signed PDF's title is not under the company's name:\n%.300s", text)
	}

	a := withDocument(t, apitest.NewServer(t, st, nil))
	res := a.get(t, "/api/v1/inventories/comparison/pdf"+query("from", moveIn.String(), "to", moveOut.String(), "x-company-id", company.String()))
	if res.status != http.StatusOK {
		t.Fatalf("B4 PDF: %d %s", res.status, res.body)
	}
	text = strings.Join(strings.Fields(pdfText(t, res.body)), " ")
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison PDF lacks %q:\n%.1500s", want, text)
		}
	}
	if !strings.Contains(text, name+" Comparación de inventarios") {
		t.Errorf("the comparison PDF's title is not under the company's name:\n%.300s", text)
	}
}
