package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// A line's CompanyName names the company and its Deposit is the
// inventory's; the export writes both back, and its file imported into
// another database exports the same again. A deposit or a name out of
// bounds rejects the line, naming the field.
func TestCompanyNameAndDepositRoundTripThroughExport(t *testing.T) {
	company, inv := uuid.New(), uuid.NewString()
	rec := minimal(company.String(), inv, uuid.NewString())
	rec["CompanyName"], rec["Deposit"] = "Inmobiliaria Los Andes S.A.S.", "1800000.50"
	first := testdb.Open(t)
	if sum := importLines(t, first, nil, "", line(t, rec)); len(sum.Rejections) != 0 || sum.Created != 1 {
		t.Fatalf("import: %v", sum)
	}
	out := exportLines(t, first, company)
	var got transfer.Record
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.CompanyName != "Inmobiliaria Los Andes S.A.S." || got.Deposit == nil || *got.Deposit != "1800000.50" {
		t.Errorf("exported CompanyName %q, Deposit %v; want the imported ones", got.CompanyName, got.Deposit)
	}
	second := testdb.Open(t)
	if sum := importLines(t, second, nil, "", strings.TrimSpace(out)); len(sum.Rejections) != 0 || sum.Created != 1 {
		t.Fatalf("re-import: %v", sum)
	}
	if again := exportLines(t, second, company); again != out {
		t.Errorf("the export of the re-import differs:\n%s\nwant\n%s", again, out)
	}
	// Imported again unchanged, nothing is written.
	if sum := importLines(t, second, nil, "", strings.TrimSpace(out)); sum.Unchanged != 1 {
		t.Errorf("the same line again: %v, want it unchanged", sum)
	}

	for _, tt := range []struct{ field, value string }{
		{"Deposit", "-1"},
		{"Deposit", "1.005"},
		{"Deposit", "mucho"},
		{"CompanyName", strings.Repeat("x", 201)},
	} {
		bad := minimal(company.String(), uuid.NewString(), uuid.NewString())
		bad[tt.field] = tt.value
		sum := importLines(t, second, nil, "", line(t, bad))
		if len(sum.Rejections) != 1 || sum.Rejections[0].Field != tt.field {
			t.Errorf("%s %.20q: %v, want the line rejected on %s", tt.field, tt.value, sum.Rejections, tt.field)
		}
	}
}

// exportLines is the export of company's inventories, without files.
func exportLines(t *testing.T, st *store.Store, company uuid.UUID) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := (&transfer.Exporter{Client: st.Client}).Export(context.Background(), company, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
