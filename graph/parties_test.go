package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
)

// timelineOf is the kinds of inventory id's events in its property's
// timeline, most recent first, separated by spaces.
func (w *writes) timelineOf(t *testing.T, id string) string {
	t.Helper()
	var timeline struct {
		Node struct {
			Property struct {
				Timeline []struct{ Kind, InventoryID string }
			}
		}
	}
	w.srv.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { property { timeline { kind inventoryId } } } } }`,
		map[string]any{"id": id}, &timeline)
	var kinds []string
	for _, ev := range timeline.Node.Property.Timeline {
		if ev.InventoryID == id {
			kinds = append(kinds, ev.Kind)
		}
	}
	return strings.Join(kinds, " ")
}

// partiesOf reads an inventory's required parties and signatures.
const partiesQuery = `query($id: ID!) { node(id: $id) { ... on Inventory { isSigned requiredSignatures
	signatures { party signerName signedAt remote method credentialName documentSha256 drawn } } } }`

type parties struct {
	IsSigned           bool     `json:"isSigned"`
	RequiredSignatures []string `json:"requiredSignatures"`
	Signatures         []struct {
		Party          string  `json:"party"`
		SignerName     *string `json:"signerName"`
		SignedAt       string  `json:"signedAt"`
		Remote         bool    `json:"remote"`
		Method         string  `json:"method"`
		CredentialName *string `json:"credentialName"`
		DocumentSHA256 *string `json:"documentSha256"`
		Drawn          bool    `json:"drawn"`
	} `json:"signatures"`
}

func (w *writes) parties(t *testing.T, id string) parties {
	t.Helper()
	var data struct{ Node parties }
	w.srv.MustData(t, companyA, partiesQuery, map[string]any{"id": id}, &data)
	return data.Node
}

// TestTheTenantSignsWhereRequired: an inventory made with
// requiredSignatures [AGENT, OWNER, TENANT] is signed by the third
// signature, not the second; each signature is listed with its party, time
// and method; the PDF has a line for each of the three, naming them.
func TestTheTenantSignsWhereRequired(t *testing.T) {
	w := newWrites(t)
	input := w.tree(uuid.NewString(), 1, 1)
	input["requiredSignatures"] = []string{"TENANT", "AGENT", "OWNER"}
	made, errs := w.create(t, input)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := w.parties(t, made.ID); strings.Join(got.RequiredSignatures, ",") != "AGENT,OWNER,TENANT" || len(got.Signatures) != 0 {
		t.Fatalf("made: %+v; want the three parties required, in order, and no signature", got)
	}
	// The same create again, its parties in another order: the same create.
	if again, errs := w.create(t, input); len(errs) > 0 || again.ID != made.ID {
		t.Errorf("the same create again: %+v %+v", again, errs)
	}
	for _, s := range []map[string]any{
		{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez"},
		{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez", "remote": true},
	} {
		if got, errs := w.sign(t, companyA, s); len(errs) > 0 || got.IsSigned || got.ApprovalCode != nil {
			t.Fatalf("signing %v: %+v %+v; want it unsigned until the tenant signs", s["party"], got, errs)
		}
	}
	// Two of three signed: the content waits, as with one of two.
	if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version + 2, "rentalPrice": "1.00"}); !refused(errs, "CONFLICT", "id") {
		t.Errorf("changing an inventory two of three parties signed: %+v; want CONFLICT", errs)
	}
	all, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "TENANT", "signerName": "Marta Ruiz"})
	if len(errs) > 0 || !all.IsSigned || !all.IsRemoteSigned || all.ApprovalCode == nil || all.PDFSha256 == nil {
		t.Fatalf("the tenant's signature: %+v %+v; want signed, remotely (the owner was), with its PDF", all, errs)
	}
	got := w.parties(t, made.ID)
	if len(got.Signatures) != 3 {
		t.Fatalf("signatures: %+v; want three", got.Signatures)
	}
	for i, want := range []struct {
		party, name string
		remote      bool
	}{{"AGENT", "Ana Gómez", false}, {"OWNER", "Luis Pérez", true}, {"TENANT", "Marta Ruiz", false}} {
		s := got.Signatures[i]
		if s.Party != want.party || s.SignerName == nil || *s.SignerName != want.name || s.Remote != want.remote ||
			s.Method != "CREDENTIAL" || !strings.HasSuffix(s.SignedAt, "Z") || s.CredentialName != nil {
			t.Errorf("signature %d: %+v; want %+v through a credential without a name (header mode)", i, s, want)
		}
	}
	if got.Signatures[2].SignedAt != *all.SignatureDate {
		t.Errorf("signed at %s, the tenant at %s: want the last signature's time", *all.SignatureDate, got.Signatures[2].SignedAt)
	}
	// Each signature is an event of its own: the tenant's too.
	if k := w.timelineOf(t, made.ID); !strings.Contains(k, "TENANT_SIGNED") || !strings.Contains(k, "FULLY_SIGNED") {
		t.Errorf("the timeline of the inventory: %s; want TENANT_SIGNED and FULLY_SIGNED", k)
	}
	text := w.signedPDFText(t, made.ID)
	for _, want := range []string{"Firma del arrendatario: Marta Ruiz", "Agente: Ana Gómez", "Propietario: Luis Pérez", "Arrendatario: Marta Ruiz",
		// The certificate on its last page: each signature, how it was sent.
		"Certificado de firmas", "Método: a través del servicio, enviada por la pasarela de la empresa", "Firma remota: sí"} {
		if !strings.Contains(text, want) {
			t.Errorf("the signed PDF does not say %q:\n%s", want, text)
		}
	}
}

// TestPartiesNotRequiredMaySignBeforeTheLast: by default the agent and the
// owner make an inventory signed; the tenant may sign before them (the PDF
// then names the tenant too), not after: the signed record is frozen.
func TestPartiesNotRequiredMaySignBeforeTheLast(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := w.parties(t, made.ID); strings.Join(got.RequiredSignatures, ",") != "AGENT,OWNER" {
		t.Fatalf("required by default: %v; want AGENT,OWNER", got.RequiredSignatures)
	}
	for _, s := range []map[string]any{
		{"inventoryId": made.ID, "party": "TENANT", "signerName": "Marta Ruiz", "remote": true},
		{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez"},
	} {
		if got, errs := w.sign(t, companyA, s); len(errs) > 0 || got.IsSigned {
			t.Fatalf("signing %v: %+v %+v; want it unsigned", s["party"], got, errs)
		}
	}
	both, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez"})
	if len(errs) > 0 || !both.IsSigned || both.IsRemoteSigned {
		t.Fatalf("the owner's signature: %+v %+v; want signed, not remotely (the tenant, who signed remotely, is not required)", both, errs)
	}
	if got := w.parties(t, made.ID); len(got.Signatures) != 3 {
		t.Errorf("signatures: %+v; want the tenant's beside the two required", got.Signatures)
	}
	other := w.tree(uuid.NewString(), 1, 1)
	signedOne, errs := w.create(t, other)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, p := range []string{"AGENT", "OWNER"} {
		if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": signedOne.ID, "party": p, "signerName": "Ana"}); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": signedOne.ID, "party": "TENANT", "signerName": "Marta Ruiz"}); !refused(errs, "CONFLICT", "inventoryId") {
		t.Errorf("the tenant signing a signed inventory: %+v; want CONFLICT", errs)
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: the PDF's text is not checked")
	}
	_, pdf := w.srv.Get(t, "/inventory/download-pdf/"+made.ID, http.Header{"X-Company-Id": {companyA}})
	text := pdfText(t, pdf)
	// The lines to sign on come before the certificate, which lists every signature.
	if i := strings.Index(text, "Certificado de firmas"); i < 0 || !strings.Contains(text[i:], "Arrendatario: Marta Ruiz") {
		t.Errorf("the signed PDF's certificate does not list the tenant's signature:\n%s", text)
	} else {
		text = text[:i]
	}
	if !strings.Contains(text, "Firma del arrendatario: Marta Ruiz") || strings.Contains(text, "Arrendatario: Marta") {
		t.Errorf("the signed PDF: want the tenant's signature said, with no line of its own (not required):\n%s", text)
	}
}

// TestRequiredSignaturesRefusedNameTheField: no party, or one twice, is
// refused on requiredSignatures, and nothing is written.
func TestRequiredSignaturesRefusedNameTheField(t *testing.T) {
	w := newWrites(t)
	for _, parties := range [][]string{{}, {"AGENT", "AGENT"}, {"TENANT", "OWNER", "TENANT"}} {
		input := w.tree(uuid.NewString(), 1, 1)
		input["requiredSignatures"] = parties
		if _, errs := w.create(t, input); !refused(errs, "INVALID_ARGUMENT", "requiredSignatures") {
			t.Errorf("requiredSignatures %v: %+v; want INVALID_ARGUMENT on requiredSignatures", parties, errs)
		}
	}
	res := w.srv.GraphQL(t, companyA, `{ inventories(first: 1, orderBy: {field: CREATED_AT, direction: DESC}) { totalCount } }`, nil)
	var before struct{ Inventories struct{ TotalCount int } }
	if err := json.Unmarshal(res.Data, &before); err != nil {
		t.Fatal(err)
	}
	input := w.tree(uuid.NewString(), 1, 1)
	input["requiredSignatures"] = []string{"LANDLORD"}
	if errs := w.srv.GraphQL(t, companyA, createMutation, map[string]any{"input": input}).Errors; len(errs) != 1 || errs[0].Code() == "INTERNAL" {
		t.Errorf("an unknown party: %+v; want one client error", errs)
	}
	after := w.srv.GraphQL(t, companyA, `{ inventories(first: 1, orderBy: {field: CREATED_AT, direction: DESC}) { totalCount } }`, nil)
	if !bytes.Equal(res.Data, after.Data) {
		t.Errorf("refused creates wrote: %s then %s", res.Data, after.Data)
	}
}

// signedPDFText is the text of inventory id's signed PDF as A2 serves it
// to company A; the test is skipped where pdftotext is not installed
// (.ci/run installs it).
func (w *writes) signedPDFText(t *testing.T, id string) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: the PDF's text is not checked")
	}
	res, pdf := w.srv.Get(t, "/inventory/download-pdf/"+id, http.Header{"X-Company-Id": {companyA}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("A2: HTTP %d", res.StatusCode)
	}
	return pdfText(t, pdf)
}

func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	text, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

var _ = apitest.Error{}
