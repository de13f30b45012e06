package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/company"
	"github.com/propertyrecords/inventory/internal/datagen"
	invrecords "github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// TestDepositIsWrittenAndReadBackExactly: createInventory takes a deposit
// as decimal text and Inventory.deposit gives it back to the cent;
// updateInventory changes it; an inventory made without one has none.
func TestDepositIsWrittenAndReadBackExactly(t *testing.T) {
	w := newWrites(t)
	read := func(id string) *string {
		t.Helper()
		var out struct {
			Node struct {
				Deposit *string `json:"deposit"`
			} `json:"node"`
		}
		w.srv.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { deposit } } }`, map[string]any{"id": id}, &out)
		return out.Node.Deposit
	}
	id := uuid.NewString()
	in := w.tree(id, 1, 1)
	in["deposit"] = "1800000.50"
	if _, errs := w.create(t, in); len(errs) > 0 {
		t.Fatalf("create: %+v", errs)
	}
	if got := read(id); got == nil || *got != "1800000.50" {
		t.Errorf("deposit: got %v, want 1800000.50", got)
	}
	if _, errs := w.update(t, map[string]any{"id": id, "expectedVersion": 1, "deposit": "2000000"}); len(errs) > 0 {
		t.Fatalf("update: %+v", errs)
	}
	if got := read(id); got == nil || *got != "2000000.00" {
		t.Errorf("deposit after update: got %v, want 2000000.00", got)
	}
	none := uuid.NewString()
	if _, errs := w.create(t, w.tree(none, 1, 1)); len(errs) > 0 {
		t.Fatalf("create: %+v", errs)
	}
	if got := read(none); got != nil {
		t.Errorf("deposit of an inventory made without one: got %q, want null", *got)
	}
}

// TestADepositOutOfBoundsIsRefusedNamingTheField: the deposit obeys the
// rental price's bounds (records.Validate), refused as INVALID_ARGUMENT (the
// error class of HTTP 400 in apperr's table) on the field deposit, and
// nothing is written. The HTTP status stays 200, as for every field error
// of a well-formed request (GraphQL over HTTP: the response has data).
func TestADepositOutOfBoundsIsRefusedNamingTheField(t *testing.T) {
	w := newWrites(t)
	before := w.count(t)
	for _, tt := range []struct{ deposit, reason string }{
		{"-1", "out of range"},
		{"10000000000000", "out of range"},
		{"1.005", "two decimal places"},
	} {
		in := w.tree(uuid.NewString(), 1, 1)
		in["deposit"] = tt.deposit
		body, _ := json.Marshal(map[string]any{"query": createMutation, "variables": map[string]any{"input": in}})
		req, _ := http.NewRequest(http.MethodPost, w.srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/graphql-response+json")
		req.Header.Set(tenant.Header, companyA)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var out struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v: %s", tt.deposit, err, raw)
		}
		if res.StatusCode != http.StatusOK || len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "INVALID_ARGUMENT" ||
			out.Errors[0].Extensions["field"] != "deposit" || !strings.Contains(out.Errors[0].Message, tt.reason) {
			t.Errorf("deposit %s: got HTTP %d %s, want 200 with INVALID_ARGUMENT on deposit saying %q", tt.deposit, res.StatusCode, raw, tt.reason)
		}
	}
	if n := w.count(t); n != before {
		t.Errorf("inventories: %d, want %d: refused writes wrote", n, before)
	}
}

// TestACompanyReadsOnlyItsOwnName: Query.company is the caller's company;
// another company reads its own (or null), never this one's, and ent's
// privacy policy hides the row from any other company's context.
func TestACompanyReadsOnlyItsOwnName(t *testing.T) {
	w := newWrites(t)
	ctx := tenant.Unrestricted(context.Background(), "test: naming a company")
	a, b := datagen.DemoCompanies[0], datagen.DemoCompanies[1]
	if err := invrecords.NameCompany(ctx, w.st.Client, a, "Inmobiliaria Prueba S.A.S."); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Company *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"company"`
	}
	var got answer
	w.srv.MustData(t, companyA, `{ company { id name } }`, nil, &got)
	if got.Company == nil || got.Company.ID != a.String() || got.Company.Name != "Inmobiliaria Prueba S.A.S." {
		t.Errorf("company A reads %+v, want its own name", got.Company)
	}
	for _, other := range []string{b.String(), uuid.NewString()} {
		var theirs answer
		w.srv.MustData(t, other, `{ company { id name } }`, nil, &theirs)
		if theirs.Company != nil && (theirs.Company.ID != other || strings.Contains(theirs.Company.Name, "Prueba")) {
			t.Errorf("company %s reads %+v, want its own or null", other, theirs.Company)
		}
	}
	n, err := w.st.Client.Company.Query().Where(company.ID(a)).Count(tenant.WithCompany(context.Background(), b))
	if err != nil || n != 0 {
		t.Errorf("company B's context counts %d of company A's rows (%v), want 0", n, err)
	}
}
