package graph_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/signaturerequest"
	"github.com/propertyrecords/inventory/internal/apitest"
	linkrecords "github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/signpage"
	"github.com/propertyrecords/inventory/internal/tenant"
)

const requestSignatureMutation = `mutation($input: RequestSignatureInput!) { requestSignature(input: $input) { url expiresAt } }`

const cancelSignatureMutation = `mutation($input: CancelSignatureRequestInput!) { cancelSignatureRequest(input: $input) { cancelled } }`

type signatureLink struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// newLinkWrites is newWrites on a server that logs every request (the
// access log included) with opts.
func newLinkWrites(t *testing.T, opts server.Options) *writes {
	t.Helper()
	w := newWrites(t)
	w.log = &apitest.LogBuffer{}
	opts.Files, opts.AccessLog = apitest.Files(t), "info"
	w.srv = apitest.NewServerLogging(t, w.st, opts, w.log.Logger(slog.LevelInfo))
	return w
}

func (w *writes) requestSignature(t *testing.T, company string, input map[string]any) (signatureLink, []apitest.Error) {
	t.Helper()
	var data struct {
		RequestSignature *signatureLink `json:"requestSignature"`
	}
	res := w.srv.GraphQL(t, company, requestSignatureMutation, map[string]any{"input": input})
	if len(res.Data) > 0 {
		if err := json.Unmarshal(res.Data, &data); err != nil {
			t.Fatalf("decoding %s: %v", res.Data, err)
		}
	}
	if data.RequestSignature == nil {
		return signatureLink{}, res.Errors
	}
	return *data.RequestSignature, res.Errors
}

func (w *writes) mustLink(t *testing.T, id, party, name string) signatureLink {
	t.Helper()
	link, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": id, "party": party, "signerName": name})
	if len(errs) > 0 {
		t.Fatalf("requestSignature: %+v", errs)
	}
	return link
}

// linkPage is one answer of a link's page.
type linkPage struct {
	status int
	header http.Header
	body   string
	csrf   string // the cookie set, if any
	// document is the form's: the SHA-256 of the draft the page offers.
	document string
}

var documentField = regexp.MustCompile(`name="document" value="([0-9a-f]{64})"`)

func openPage(t *testing.T, link, lang string) linkPage {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	return send(t, req)
}

// postPage posts the form: cookie and field are the CSRF token's two
// halves ("" leaves one out).
func postPage(t *testing.T, link, cookie, field string, form url.Values) linkPage {
	t.Helper()
	if field != "" {
		form.Set("csrf", field)
	}
	req, err := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "Mozilla/5.0 (Linux; Android 14) test-phone")
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "sign_csrf", Value: cookie})
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) linkPage {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := linkPage{status: res.StatusCode, header: res.Header, body: string(body)}
	if m := documentField.FindStringSubmatch(p.body); m != nil {
		p.document = m[1]
	}
	for _, c := range res.Cookies() {
		if c.Name == "sign_csrf" {
			p.csrf = c.Value
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/sign/" {
				t.Errorf("the CSRF cookie: %+v; want HttpOnly, SameSite=Strict, Path=/sign/", c)
			}
		}
	}
	return p
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// tokenOf is the last part of a link's URL.
func tokenOf(link string) string { return link[strings.LastIndex(link, "/")+1:] }

// TestATenantSignsFromALink: the whole flow over HTTP. Company A asks for
// a link for the tenant of an inventory the three parties sign; the linkPage
// shows the inventory and a form; the agent's and the owner's signatures
// meanwhile leave the link working (they change the version, not the
// content); the form posted with its CSRF token signs for the tenant,
// remotely, by LINK, and keeps the evidence; the link then signs no more;
// the PDF names the tenant; the token is in no log line.
func TestATenantSignsFromALink(t *testing.T) {
	w := newLinkWrites(t, server.Options{})
	input := w.tree(uuid.NewString(), 2, 2)
	input["requiredSignatures"] = []string{"AGENT", "OWNER", "TENANT"}
	made, errs := w.create(t, input)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	before := time.Now()
	link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
	token := tokenOf(link.URL)
	if !strings.HasPrefix(link.URL, w.srv.URL+"/sign/") || len(token) != 43 {
		t.Fatalf("url %q: want %s/sign/ and a token of 256 bits in base64url", link.URL, w.srv.URL)
	}
	expires, err := time.Parse(time.RFC3339, link.ExpiresAt)
	if err != nil || !strings.HasSuffix(link.ExpiresAt, "Z") || expires.Sub(before) < 72*time.Hour-time.Minute || expires.Sub(before) > 72*time.Hour+time.Minute {
		t.Errorf("expiresAt %q: want 72 hours from now, in UTC", link.ExpiresAt)
	}

	es := openPage(t, link.URL, "")
	if es.status != http.StatusOK || es.csrf == "" {
		t.Fatalf("GET the linkPage: HTTP %d, cookie %q\n%s", es.status, es.csrf, es.body)
	}
	if csp := es.header.Get("Content-Security-Policy"); csp != signpage.ContentSecurityPolicy || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, want := range []string{`lang="es"`, "Firma del inventario", "Habitación 1", "Habitación 2", "Ventana 1", "Ventana 2", "/5",
		`<form method="post" id="sign">`, `name="csrf" value="` + es.csrf + `"`, `placeholder="Marta Ruiz"`, `name="consent"`, linkrecords.ConsentVersion,
		`name="viewport"`, `<canvas id="pad"`, `href="` + token + `/draft.pdf"`} {
		if !strings.Contains(es.body, want) {
			t.Errorf("the linkPage does not hold %q:\n%s", want, es.body)
		}
	}
	// One script, the pad's, from the service; the form signs without it
	// (the posts below send no drawing), and the pad shows only with it.
	if strings.Count(es.body, "<script") != 1 || !strings.Contains(es.body, `<script src="pad.js"></script>`) || !strings.Contains(es.body, `<div id="pad-block" hidden>`) {
		t.Error("the linkPage's scripts: want pad.js alone, the pad hidden until it runs")
	}
	if res, js := w.srv.Get(t, "/sign/pad.js", nil); res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || !bytes.Contains(js, []byte("pointerdown")) {
		t.Errorf("GET /sign/pad.js: HTTP %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	// The draft the page offers is the document whose SHA-256 the form
	// sends back.
	draftRes, draft := w.srv.Get(t, "/sign/"+token+"/draft.pdf", nil)
	if draftRes.StatusCode != http.StatusOK || draftRes.Header.Get("Content-Type") != "application/pdf" || es.document == "" || sha256Hex(draft) != es.document {
		t.Fatalf("GET the draft: HTTP %d %s, SHA-256 %s; want a PDF whose SHA-256 is the form's document %q", draftRes.StatusCode, draftRes.Header.Get("Content-Type"), sha256Hex(draft), es.document)
	}
	if en := openPage(t, link.URL, "en-GB,en;q=0.9,es;q=0.5"); en.status != http.StatusOK || !strings.Contains(en.body, "Sign the inventory") || !strings.Contains(en.body, `lang="en"`) {
		t.Errorf("in English: HTTP %d\n%s", en.status, en.body)
	}
	// The owner signs meanwhile: the version changes, not the content.
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	// The page showed the draft before the owner's signature: it is shown
	// again as it now is, to be signed anew; nothing is written.
	changed := postPage(t, link.URL, es.csrf, es.csrf, url.Values{"signerName": {" Marta Ruiz Díaz "}, "consent": {"yes"}, "document": {es.document}})
	if changed.status != http.StatusConflict || !strings.Contains(changed.body, "El inventario cambió desde que abrió esta página") ||
		changed.document == "" || changed.document == es.document || len(w.parties(t, made.ID).Signatures) != 2 {
		t.Fatalf("POST the form of a draft the owner's signature changed: HTTP %d, document %q (was %q)\n%s", changed.status, changed.document, es.document, changed.body)
	}
	const drawn = "100,150 140,60 180,150 220,60;300,100"
	done := postPage(t, link.URL, es.csrf, es.csrf, url.Values{"signerName": {" Marta Ruiz Díaz "}, "consent": {"yes"}, "document": {changed.document}, "drawing": {drawn}})
	if done.status != http.StatusOK || !strings.Contains(done.body, "Inventario firmado") || strings.Contains(done.body, "<form") {
		t.Fatalf("POST the form: HTTP %d\n%s", done.status, done.body)
	}
	got := w.parties(t, made.ID)
	if !got.IsSigned || len(got.Signatures) != 3 {
		t.Fatalf("after the link: %+v; want signed by the three", got)
	}
	tenantSig := got.Signatures[2]
	if tenantSig.Party != "TENANT" || tenantSig.Method != "LINK" || !tenantSig.Remote || tenantSig.SignerName == nil ||
		*tenantSig.SignerName != "Marta Ruiz Díaz" || tenantSig.CredentialName != nil {
		t.Errorf("the tenant's signature: %+v; want LINK, remote, the name typed, no credential", tenantSig)
	}
	if got.Signatures[0].Method != "CREDENTIAL" || got.Signatures[1].Method != "CREDENTIAL" {
		t.Errorf("the agent's and the owner's: %+v; want CREDENTIAL", got.Signatures[:2])
	}
	// What each signed: the tenant the draft the page offered last, each
	// other party the draft as it stood when they signed.
	if d := tenantSig.DocumentSHA256; d == nil || *d != changed.document || !tenantSig.Drawn {
		t.Errorf("the tenant's document %v, drawn %v; want %s, drawn", d, tenantSig.Drawn, changed.document)
	}
	if d := got.Signatures[1].DocumentSHA256; d == nil || *d != es.document || got.Signatures[1].Drawn {
		t.Errorf("the owner's document %v: want the draft before the owner signed, the one the page first showed", d)
	}
	if !strings.Contains(done.body, `<svg class="drawn"`) || !strings.Contains(done.body, "M100 150L140 60") {
		t.Errorf("the signed page does not show the signature drawn:\n%s", done.body)
	}
	// The evidence, on the link's row.
	ctx := tenant.Unrestricted(context.Background(), "test: the link's evidence")
	req, err := w.st.Client.SignatureRequest.Query().Where(signaturerequest.InventoryID(uuid.MustParse(made.ID))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if req.UsedAt == nil || req.ClientAddress == nil || *req.ClientAddress != "127.0.0.1" ||
		req.UserAgent == nil || !strings.Contains(*req.UserAgent, "test-phone") || req.ConsentVersion == nil || *req.ConsentVersion != linkrecords.ConsentVersion ||
		req.SignedName == nil || *req.SignedName != "Marta Ruiz Díaz" || req.TokenHash == token || strings.Contains(req.TokenHash, token) {
		t.Errorf("the evidence: %+v", req)
	}
	// Each step in the timeline: the link issued, the tenant's signature.
	if k := w.timelineOf(t, made.ID); !strings.Contains(k, "TENANT_SIGNED") || !strings.Contains(k, "SIGNATURE_REQUESTED") {
		t.Errorf("the timeline of the inventory: %s; want SIGNATURE_REQUESTED and TENANT_SIGNED", k)
	}
	// Used: it signs no more, and says so.
	again := postPage(t, link.URL, es.csrf, es.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}, "document": {es.document}})
	if again.status != http.StatusGone || !strings.Contains(again.body, "Ya se firmó con este enlace") || strings.Contains(again.body, "<form") {
		t.Errorf("the link posted again: HTTP %d\n%s", again.status, again.body)
	}
	if reread := openPage(t, link.URL, "en"); reread.status != http.StatusGone || !strings.Contains(reread.body, "This link has been used") {
		t.Errorf("the used link's linkPage: HTTP %d\n%s", reread.status, reread.body)
	}
	logged := w.log.String()
	if strings.Contains(logged, token) {
		t.Errorf("the token is in the log:\n%s", logged)
	}
	if !strings.Contains(logged, `"path":"/sign/…"`) {
		t.Errorf("the access log does not say /sign/…:\n%s", logged)
	}
	text := w.signedPDFText(t, made.ID)
	if !strings.Contains(text, "Arrendatario: Marta Ruiz Díaz") {
		t.Errorf("the signed PDF does not name the tenant:\n%s", text)
	}
	// Each signature's line says how it was made: the tenant's remotely
	// from the link, the agent's and the owner's in person; the signature
	// date no longer marks them all remote.
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Firma del agente: Ana Gómez, [^,]+ UTC\), firma en persona`),
		regexp.MustCompile(`Firma del propietario: Luis Pérez, [^,]+ UTC\), firma en persona`),
		regexp.MustCompile(`Firma del arrendatario: Marta Ruiz Díaz, [^,]+ UTC\), firma remota desde un enlace`),
		regexp.MustCompile(`Fecha de firma: [^,]+ UTC\) Código de aprobación`),
	} {
		if !want.MatchString(flat) {
			t.Errorf("the signed PDF does not match %s:\n%s", want, flat)
		}
	}
	// Its last page certifies each signature: the tenant's from the link,
	// with what the page kept of the signer.
	certificate := text[max(strings.LastIndex(text, "Certificado de firmas"), 0):]
	for _, want := range []string{"Certificado de firmas", "Método: desde un enlace de firma enviado a la parte", "Dirección: 127.0.0.1",
		"Navegador: Mozilla/5.0 (Linux; Android 14) test-phone", "Texto de consentimiento: versión " + linkrecords.ConsentVersion, "Método: a través del servicio",
		"Firma dibujada: sí", "Firma dibujada: no", changed.document[:40]} {
		if !strings.Contains(certificate, want) {
			t.Errorf("the signed PDF's certificate does not say %q:\n%s", want, certificate)
		}
	}
}

// TestSignatureLinksRefused: what a link cannot be asked for, and each way a
// link stops signing, says which with no form; a form without its CSRF
// token writes nothing.
func TestSignatureLinksRefused(t *testing.T) {
	w := newLinkWrites(t, server.Options{})
	input := w.tree(uuid.NewString(), 1, 1)
	input["requiredSignatures"] = []string{"AGENT", "OWNER", "TENANT"}
	made, errs := w.create(t, input)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tenantLink := map[string]any{"inventoryId": made.ID, "party": "TENANT", "signerName": "Marta Ruiz"}

	t.Run("unknown", func(t *testing.T) {
		raw := make([]byte, 32)
		_, _ = rand.Read(raw)
		for _, token := range []string{base64.RawURLEncoding.EncodeToString(raw), "abc", strings.Repeat("A", 500)} {
			p := openPage(t, w.srv.URL+"/sign/"+token, "")
			if p.status != http.StatusNotFound || !strings.Contains(p.body, "Enlace no encontrado") || strings.Contains(p.body, "<form") || p.csrf != "" {
				t.Errorf("GET an unknown link: HTTP %d\n%s", p.status, p.body)
			}
		}
	})
	t.Run("another company", func(t *testing.T) {
		if _, errs := w.requestSignature(t, companyB, tenantLink); !refused(errs, "NOT_FOUND", "inventoryId") {
			t.Errorf("company B asking for a link to company A's inventory: %+v; want NOT_FOUND", errs)
		}
	})
	t.Run("invalid input", func(t *testing.T) {
		for field, in := range map[string]map[string]any{
			"expiresIn":  {"inventoryId": made.ID, "party": "TENANT", "signerName": "Marta", "expiresIn": 10},
			"signerName": {"inventoryId": made.ID, "party": "TENANT", "signerName": "  "},
		} {
			if _, errs := w.requestSignature(t, companyA, in); !refused(errs, "INVALID_ARGUMENT", field) {
				t.Errorf("%v: %+v; want INVALID_ARGUMENT on %s", in, errs, field)
			}
		}
		if _, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": uuid.NewString(), "party": "TENANT", "signerName": "M"}); !refused(errs, "NOT_FOUND", "inventoryId") {
			t.Errorf("an unknown inventory: %+v; want NOT_FOUND", errs)
		}
		if res := w.srv.GraphQL(t, companyA, requestSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "LANDLORD", "signerName": "M"}}); len(res.Errors) != 1 || res.Errors[0].Code() == "INTERNAL" {
			t.Errorf("an unknown party: %+v; want one client error", res.Errors)
		}
		if link, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis", "expiresIn": 3600}); len(errs) > 0 {
			t.Errorf("an hour: %+v", errs)
		} else if at, _ := time.Parse(time.RFC3339, link.ExpiresAt); time.Until(at) > time.Hour+time.Minute || time.Until(at) < time.Hour-time.Minute {
			t.Errorf("an hour: expires at %s", link.ExpiresAt)
		}
	})
	t.Run("replaced and cancelled", func(t *testing.T) {
		first := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
		second := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
		if p := openPage(t, first.URL, ""); p.status != http.StatusGone || !strings.Contains(p.body, "cancelado o reemplazado") || strings.Contains(p.body, "<form") {
			t.Errorf("the link replaced: HTTP %d\n%s", p.status, p.body)
		}
		if p := openPage(t, second.URL, ""); p.status != http.StatusOK {
			t.Errorf("the newer link: HTTP %d", p.status)
		}
		var data struct{ CancelSignatureRequest struct{ Cancelled bool } }
		w.srv.MustData(t, companyA, cancelSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "TENANT"}}, &data)
		if !data.CancelSignatureRequest.Cancelled {
			t.Error("cancelSignatureRequest: want cancelled, a link was open")
		}
		if p := openPage(t, second.URL, "en"); p.status != http.StatusGone || !strings.Contains(p.body, "cancelled") {
			t.Errorf("the link cancelled: HTTP %d\n%s", p.status, p.body)
		}
		w.srv.MustData(t, companyA, cancelSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "TENANT"}}, &data)
		if data.CancelSignatureRequest.Cancelled {
			t.Error("cancelling again: want cancelled false, none was open")
		}
		if res := w.srv.GraphQL(t, companyB, cancelSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "TENANT"}}); !refused(res.Errors, "NOT_FOUND", "inventoryId") {
			t.Errorf("company B cancelling: %+v; want NOT_FOUND", res.Errors)
		}
	})
	t.Run("a party in another case", func(t *testing.T) {
		// gqlparser lets a variable's enum value through in any case: the
		// party's own reading refuses it, as the client's error.
		for name, send := range map[string]func() []apitest.Error{
			"requestSignature": func() []apitest.Error {
				_, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": made.ID, "party": "agent", "signerName": "Ana"})
				return errs
			},
			"cancelSignatureRequest": func() []apitest.Error {
				return w.srv.GraphQL(t, companyA, cancelSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "Tenant"}}).Errors
			},
			"signInventory": func() []apitest.Error {
				_, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "owner", "signerName": "Luis"})
				return errs
			},
			"createInventory": func() []apitest.Error {
				tree := w.tree(uuid.NewString(), 1, 1)
				tree["requiredSignatures"] = []string{"tenant"}
				_, errs := w.create(t, tree)
				return errs
			},
		} {
			if errs := send(); len(errs) != 1 || errs[0].Code() != "INVALID_ARGUMENT" {
				t.Errorf("%s with a party in lower case: %+v; want INVALID_ARGUMENT", name, errs)
			}
		}
	})
	t.Run("CSRF", func(t *testing.T) {
		link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
		p := openPage(t, link.URL, "")
		form := url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}}
		other, _ := newToken()
		for name, post := range map[string]linkPage{
			"no cookie":      postPage(t, link.URL, "", p.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}}),
			"no field":       postPage(t, link.URL, p.csrf, "", url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}}),
			"another value":  postPage(t, link.URL, p.csrf, other, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}}),
			"another cookie": postPage(t, link.URL, other, p.csrf, form),
		} {
			if post.status != http.StatusForbidden || strings.Contains(post.body, "<form") {
				t.Errorf("%s: HTTP %d\n%s", name, post.status, post.body)
			}
		}
		if len(w.parties(t, made.ID).Signatures) != 0 {
			t.Fatal("a refused form signed")
		}
		// No consent: the form again, with what is missing; nothing written.
		noConsent := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"Marta Ruiz"}})
		if noConsent.status != http.StatusBadRequest || !strings.Contains(noConsent.body, "Marque la casilla") || !strings.Contains(noConsent.body, "<form") {
			t.Errorf("without consent: HTTP %d\n%s", noConsent.status, noConsent.body)
		}
		noDocument := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}})
		if noDocument.status != http.StatusConflict || noDocument.document != p.document {
			t.Errorf("without the document: HTTP %d; want 409 and the form again, with the draft's document\n%s", noDocument.status, noDocument.body)
		}
		noName := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"  "}, "consent": {"yes"}, "document": {p.document}})
		if noName.status != http.StatusBadRequest || !strings.Contains(noName.body, "Escriba su nombre") {
			t.Errorf("without a name: HTTP %d\n%s", noName.status, noName.body)
		}
		// Hostile forms: a client error each, never a 500.
		for name, form := range map[string]url.Values{
			"a name too long":       {"signerName": {strings.Repeat("ñ", 201)}, "consent": {"yes"}},
			"a NUL":                 {"signerName": {"Marta\x00Ruiz"}, "consent": {"yes"}},
			"not UTF-8":             {"signerName": {"Marta \xff"}, "consent": {"yes"}},
			"a huge body":           {"signerName": {"Marta"}, "consent": {"yes"}, "pad": {strings.Repeat("x", 64<<10)}},
			"a drawing off the pad": {"signerName": {"Marta"}, "consent": {"yes"}, "document": {p.document}, "drawing": {"10,10 700,20"}},
			"a drawing of garbage":  {"signerName": {"Marta"}, "consent": {"yes"}, "document": {p.document}, "drawing": {"<svg onload=x>"}},
			"too many strokes":      {"signerName": {"Marta"}, "consent": {"yes"}, "document": {p.document}, "drawing": {strings.Repeat("1,1;", 200) + "1,1"}},
		} {
			got := postPage(t, link.URL, p.csrf, p.csrf, form)
			if got.status != http.StatusBadRequest {
				t.Errorf("%s: HTTP %d; want 400\n%s", name, got.status, got.body)
			}
			if form.Has("drawing") && (!strings.Contains(got.body, "El dibujo de la firma no es válido") || got.document != p.document) {
				t.Errorf("%s: the form again should say the drawing is not valid, with the same document\n%s", name, got.body)
			}
		}
		if len(w.parties(t, made.ID).Signatures) != 0 {
			t.Fatal("a refused form signed")
		}
		if again := openPage(t, link.URL, ""); again.status != http.StatusOK {
			t.Errorf("the link after refused forms: HTTP %d; want it still open", again.status)
		}
	})
	t.Run("outdated", func(t *testing.T) {
		link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
		p := openPage(t, link.URL, "")
		if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version, "rentalPrice": "2000000.00"}); len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := openPage(t, link.URL, ""); got.status != http.StatusGone || !strings.Contains(got.body, "El inventario cambió") {
			t.Errorf("the link after updateInventory: HTTP %d\n%s", got.status, got.body)
		}
		post := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}, "document": {p.document}})
		if post.status != http.StatusGone || len(w.parties(t, made.ID).Signatures) != 0 {
			t.Errorf("posting the outdated link: HTTP %d; want 410 and no signature", post.status)
		}
	})
	t.Run("signed otherwise", func(t *testing.T) {
		link := w.mustLink(t, made.ID, "AGENT", "Ana")
		p := openPage(t, link.URL, "")
		if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez"}); len(errs) > 0 {
			t.Fatal(errs)
		}
		post := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"Ana"}, "consent": {"yes"}, "document": {p.document}})
		if post.status != http.StatusGone || !strings.Contains(post.body, "ya firmó") {
			t.Errorf("the agent's link once the agent signed through the API: HTTP %d\n%s", post.status, post.body)
		}
		if _, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana"}); !refused(errs, "CONFLICT", "party") {
			t.Errorf("a link for a party who signed: %+v; want CONFLICT on party", errs)
		}
	})
}

// TestSignatureLinkExpires: a link past its time says so, and does not sign.
func TestSignatureLinkExpires(t *testing.T) {
	w := newLinkWrites(t, server.Options{SigningLinkTTL: time.Second})
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
	p := openPage(t, link.URL, "")
	time.Sleep(2 * time.Second)
	if got := openPage(t, link.URL, ""); got.status != http.StatusGone || !strings.Contains(got.body, "El enlace venció") {
		t.Errorf("GET an expired link: HTTP %d\n%s", got.status, got.body)
	}
	if p.csrf != "" {
		post := postPage(t, link.URL, p.csrf, p.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}, "document": {p.document}})
		if post.status != http.StatusGone || len(w.parties(t, made.ID).Signatures) != 0 {
			t.Errorf("POST an expired link: HTTP %d; want 410 and no signature", post.status)
		}
	}
}

// TestSignatureLinkRate: each address has its rate on the pages.
func TestSignatureLinkRate(t *testing.T) {
	w := newLinkWrites(t, server.Options{SignRatePerMinute: 3})
	for i := range 4 {
		p := openPage(t, w.srv.URL+"/sign/"+strings.Repeat("x", 43), "")
		switch {
		case i < 3 && p.status != http.StatusNotFound:
			t.Errorf("request %d: HTTP %d; want 404", i+1, p.status)
		case i == 3 && (p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == ""):
			t.Errorf("request %d: HTTP %d, Retry-After %q; want 429 with Retry-After", i+1, p.status, p.header.Get("Retry-After"))
		}
	}
	// The rest of the service is not limited by it.
	if res := w.srv.GraphQL(t, companyA, `{ inventories(first: 1) { totalCount } }`, nil); len(res.Errors) > 0 {
		t.Errorf("GraphQL once the pages' rate is spent: %+v", res.Errors)
	}
}

func newToken() (string, error) {
	raw := make([]byte, 32)
	_, err := rand.Read(raw)
	return base64.RawURLEncoding.EncodeToString(raw), err
}

// TestALinkSignsOnce: the same form posted at once from several tabs signs
// once (the link is spent in the signature's transaction); the evidence
// names the address a trusted proxy forwarded for.
func TestALinkSignsOnce(t *testing.T) {
	w := newLinkWrites(t, server.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
	p := openPage(t, link.URL, "")
	const tabs = 6
	statuses := make(chan int, tabs)
	var wg sync.WaitGroup
	for range tabs {
		wg.Go(func() {
			form := url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}, "csrf": {p.csrf}, "document": {p.document}}
			req, _ := http.NewRequest(http.MethodPost, link.URL, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", "198.51.100.9")
			req.AddCookie(&http.Cookie{Name: "sign_csrf", Value: p.csrf})
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusGone && !strings.Contains(string(body), "Ya se firmó con este enlace") {
				t.Errorf("a post that lost the race: %s; want it to say the link was used", body)
			}
			statuses <- res.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusOK] != 1 || counts[http.StatusGone]+counts[http.StatusServiceUnavailable] != tabs-1 || counts[http.StatusInternalServerError] > 0 {
		t.Errorf("%d posts at once: %v; want one 200 and the others 410 (or 503 when the database was busy)", tabs, counts)
	}
	got := w.parties(t, made.ID)
	if len(got.Signatures) != 1 || got.Signatures[0].Method != "LINK" {
		t.Fatalf("signatures: %+v; want the tenant's, once", got.Signatures)
	}
	ctx := tenant.Unrestricted(context.Background(), "test: the link's evidence")
	req, err := w.st.Client.SignatureRequest.Query().Where(signaturerequest.InventoryID(uuid.MustParse(made.ID))).Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if req.ClientAddress == nil || *req.ClientAddress != "198.51.100.9" || req.UsedAt == nil || !req.UsedAt.Equal(*mustTime(t, got.Signatures[0].SignedAt)) {
		t.Errorf("the evidence: address %v, used at %v (signed at %s); want the forwarded address and the signature's time", req.ClientAddress, req.UsedAt, got.Signatures[0].SignedAt)
	}
}

func mustTime(t *testing.T, s string) *time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return &at
}

// TestSignatureLinkOnAReadOnlyService: a service whose writes are off
// (INVENTORY_WRITES=off) shows no form for a link another issued, and its
// POST signs nothing.
func TestSignatureLinkOnAReadOnlyService(t *testing.T) {
	w := newLinkWrites(t, server.Options{})
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	link := w.mustLink(t, made.ID, "TENANT", "Marta Ruiz")
	open := openPage(t, link.URL, "")
	readOnly := apitest.NewServerWith(t, w.st, server.Options{Files: apitest.Files(t), ReadOnly: true})
	there := readOnly.URL + "/sign/" + tokenOf(link.URL)
	if p := openPage(t, there, ""); p.status != http.StatusServiceUnavailable || strings.Contains(p.body, "<form") || p.csrf != "" {
		t.Errorf("GET on a read-only service: HTTP %d\n%s", p.status, p.body)
	}
	post := postPage(t, there, open.csrf, open.csrf, url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}, "document": {open.document}})
	if post.status != http.StatusServiceUnavailable || len(w.parties(t, made.ID).Signatures) != 0 {
		t.Errorf("POST on a read-only service: HTTP %d; want 503 and no signature\n%s", post.status, post.body)
	}
	if _, errs := w.requestSignature(t, companyA, map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	res := readOnly.GraphQL(t, companyA, requestSignatureMutation, map[string]any{"input": map[string]any{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis"}})
	if !refused(res.Errors, "FORBIDDEN", "") {
		t.Errorf("requestSignature on a read-only service: %+v; want FORBIDDEN", res.Errors)
	}
}
