package graph_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/tenant"
)

const signMutation = `mutation($input: SignInventoryInput!) { signInventory(input: $input) { inventory {
	id version isSigned isRemoteSigned approvalCode signatureDate agentSignatureDate ownerSignatureDate
	agentSignerName agentSignedRemotely ownerSignerName ownerSignedRemotely pdfSha256 } } }`

type signed struct {
	ID                  string  `json:"id"`
	Version             int     `json:"version"`
	IsSigned            bool    `json:"isSigned"`
	IsRemoteSigned      bool    `json:"isRemoteSigned"`
	ApprovalCode        *string `json:"approvalCode"`
	SignatureDate       *string `json:"signatureDate"`
	AgentSignatureDate  *string `json:"agentSignatureDate"`
	OwnerSignatureDate  *string `json:"ownerSignatureDate"`
	AgentSignerName     *string `json:"agentSignerName"`
	AgentSignedRemotely bool    `json:"agentSignedRemotely"`
	OwnerSignerName     *string `json:"ownerSignerName"`
	OwnerSignedRemotely bool    `json:"ownerSignedRemotely"`
	PDFSha256           *string `json:"pdfSha256"`
}

func (w *writes) sign(t testing.TB, company string, input map[string]any) (signed, []apitest.Error) {
	t.Helper()
	var data struct {
		SignInventory *struct {
			Inventory signed `json:"inventory"`
		} `json:"signInventory"`
	}
	res := w.srv.GraphQL(t, company, signMutation, map[string]any{"input": input})
	if len(res.Data) > 0 {
		if err := json.Unmarshal(res.Data, &data); err != nil {
			t.Fatalf("decoding %s: %v", res.Data, err)
		}
	}
	if data.SignInventory != nil {
		return data.SignInventory.Inventory, res.Errors
	}
	return signed{}, res.Errors
}

func refused(errs []apitest.Error, code, field string) bool {
	return len(errs) == 1 && errs[0].Code() == code && (field == "" || errs[0].Extensions["field"] == field)
}

func TestTwoSignaturesSignAndFreezeTheInventory(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 2, 2))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	agent := map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": " Ana Gómez ", "remote": true, "expectedVersion": made.Version}
	first, errs := w.sign(t, companyA, agent)
	if len(errs) > 0 || first.IsSigned || first.AgentSignatureDate == nil || first.OwnerSignatureDate != nil ||
		first.AgentSignerName == nil || *first.AgentSignerName != "Ana Gómez" || !first.AgentSignedRemotely || first.IsRemoteSigned ||
		first.ApprovalCode != nil || first.Version != made.Version+1 {
		t.Fatalf("the agent's signature: %+v %+v", first, errs)
	}
	// A retry of the same signature writes nothing; another of the agent's is CONFLICT.
	if again, errs := w.sign(t, companyA, agent); len(errs) > 0 || again.Version != first.Version || *again.AgentSignatureDate != *first.AgentSignatureDate {
		t.Errorf("the same signature again: %+v %+v; want the inventory as it was", again, errs)
	}
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Otro", "remote": true}); !refused(errs, "CONFLICT", "party") {
		t.Errorf("the agent signing twice: %+v; want CONFLICT on party", errs)
	}
	// Half signed: the content waits for the other signature.
	if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": first.Version, "rentalPrice": "1.00"}); !refused(errs, "CONFLICT", "id") {
		t.Errorf("changing a half-signed inventory: %+v; want CONFLICT", errs)
	}
	// The owner signs a version that is gone: CONFLICT, nothing written.
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez", "expectedVersion": made.Version}); !refused(errs, "CONFLICT", "expectedVersion") {
		t.Errorf("signing a stale version: %+v; want CONFLICT on expectedVersion", errs)
	}
	owner := map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez"}
	both, errs := w.sign(t, companyA, owner)
	if len(errs) > 0 || !both.IsSigned || !both.IsRemoteSigned || both.ApprovalCode == nil || !regexp.MustCompile(`^APR-\d{6}$`).MatchString(*both.ApprovalCode) ||
		both.SignatureDate == nil || *both.SignatureDate != *both.OwnerSignatureDate || *both.SignatureDate < *both.AgentSignatureDate ||
		both.OwnerSignerName == nil || *both.OwnerSignerName != "Luis Pérez" || both.OwnerSignedRemotely || both.PDFSha256 == nil {
		t.Fatalf("the owner's signature: %+v %+v; want signed, remotely (the agent was), with a code, the later date and its PDF", both, errs)
	}
	if !strings.HasSuffix(*both.SignatureDate, "Z") {
		t.Errorf("signature date %s: want UTC", *both.SignatureDate)
	}
	if again, errs := w.sign(t, companyA, owner); len(errs) > 0 || again.Version != both.Version || *again.ApprovalCode != *both.ApprovalCode {
		t.Errorf("the owner's signature again: %+v %+v; want the signed inventory, unchanged", again, errs)
	}
	for _, input := range []map[string]any{
		{"inventoryId": made.ID, "party": "OWNER", "signerName": "Otra persona"},
		{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez", "remote": false},
	} {
		if _, errs := w.sign(t, companyA, input); !refused(errs, "CONFLICT", "party") {
			t.Errorf("signing a signed inventory again (%v): %+v; want CONFLICT", input, errs)
		}
	}
	if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": both.Version, "rentalPrice": "1.00"}); !refused(errs, "CONFLICT", "") ||
		!strings.Contains(errs[0].Message, "make a new inventory") {
		t.Errorf("changing the signed inventory: %+v; want CONFLICT saying to make a new inventory", errs)
	}
	if !strings.Contains(w.log.String(), "records: inventory signed") {
		t.Errorf("no audit line of the signature in %s", w.log.String())
	}
}

func TestSignaturesRefusedNameTheField(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	theirs, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(false)).First(tenant.WithCompany(context.Background(), datagen.DemoCompanies[1]))
	if err != nil {
		t.Fatal(err)
	}
	importedSigned, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(true)).First(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		input       map[string]any
		code, field string
	}{
		{"another company's inventory", map[string]any{"inventoryId": theirs.ID.String(), "party": "AGENT", "signerName": "Ana"}, "NOT_FOUND", "inventoryId"},
		{"no such inventory", map[string]any{"inventoryId": uuid.NewString(), "party": "AGENT", "signerName": "Ana"}, "NOT_FOUND", "inventoryId"},
		{"an empty name", map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "   "}, "INVALID_ARGUMENT", "signerName"},
		{"a name too long", map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": strings.Repeat("a", 201)}, "INVALID_ARGUMENT", "signerName"},
		{"a NUL in the name", map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "An\x00a"}, "INVALID_ARGUMENT", "input.signerName"},
		{"a signed inventory", map[string]any{"inventoryId": importedSigned.ID.String(), "party": "OWNER", "signerName": "Ana"}, "CONFLICT", ""},
	} {
		if _, errs := w.sign(t, companyA, tc.input); !refused(errs, tc.code, tc.field) {
			t.Errorf("%s: %+v; want %s on %q", tc.name, errs, tc.code, tc.field)
		}
	}
	after, err := w.st.Client.Inventory.Get(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]), uuid.MustParse(made.ID))
	if err != nil || after.Version != made.Version || after.AgentSignatureDate != nil || after.OwnerSignatureDate != nil {
		t.Errorf("a refused signature wrote: %+v (%v)", after, err)
	}
}
