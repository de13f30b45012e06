package ide_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The demo dataset is loaded once per test process (testdb.Dataset); on
// PostgreSQL its template database is dropped once the tests are done.
func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// The capture tab with the tenant ticked in the Signing links panel, its
// operations run as the tab and the panel run them (the capture document,
// the variables the panel writes, the panel's own variables): the agent and
// the owner sign and it is not signed; the panel requests the tenant's link,
// whose page answers with its form; cancelled, the page says so; requested
// again, the tenant signs on the page, and the panel reads it signed.
func TestTheIDEsTenantSignsFromTheirLink(t *testing.T) {
	st := testdb.DemoRecords.Open(t)
	company := datagen.DemoCompanies[0]
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), IDECompany: company})
	if res, body := srv.Get(t, "/", nil); res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("signingPlugin(")) {
		t.Fatalf("the IDE page: got %d, want it with the Signing links panel", res.StatusCode)
	}
	ctx := tenant.WithCompany(context.Background(), company)
	property, err := st.Client.Property.Query().FirstID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.Client.Item.Query().WithMaterial().First(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// What the panel's TENANT box does to the tab's variables.
	vars := ide.CaptureVariables(ide.Examples{Property: property, Material: it.Edges.Material.ID})
	id := ide.CaptureInventoryFor(ide.Parties).String()
	vars["id"] = id
	input := vars["input"].(map[string]any)
	input["id"], input["requiredSignatures"] = id, ide.Parties

	run := func(operation string, vars map[string]any) map[string]any {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": ide.CaptureQuery, "operationName": operation, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Company-Id", company.String())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			Data   map[string]any
			Errors []any
		}
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%s: %v %v", operation, out.Errors, err)
		}
		return out.Data
	}
	status := func() map[string]any {
		t.Helper()
		node, _ := run("SigningStatus", map[string]any{"id": id})["node"].(map[string]any)
		if node == nil {
			t.Fatalf("SigningStatus: no inventory %s", id)
		}
		return node
	}
	parties := func(node map[string]any) (signed []string) {
		for _, s := range node["signatures"].([]any) {
			s := s.(map[string]any)
			signed = append(signed, s["party"].(string)+" "+s["method"].(string))
		}
		return signed
	}

	made := run("CreateInventory", vars)["createInventory"].(map[string]any)["inventory"].(map[string]any)
	if made["id"] != id || len(made["requiredSignatures"].([]any)) != 3 {
		t.Fatalf("CreateInventory with the tenant ticked: got %v", made)
	}
	run("SignAsAgent", vars)
	owner := run("SignAsOwner", vars)["signInventory"].(map[string]any)["inventory"].(map[string]any)
	if owner["isSigned"] != false {
		t.Fatalf("signed by the agent and the owner, the tenant required: got %v, want not signed", owner)
	}
	if got := parties(status()); strings.Join(got, ",") != "AGENT CREDENTIAL,OWNER CREDENTIAL" {
		t.Errorf("SigningStatus before the tenant: got %v", got)
	}

	// The panel's request and cancel: its party (TENANT) and name.
	request := func() string {
		t.Helper()
		link := run("RequestSigningLink", map[string]any{"id": id, "party": "TENANT", "signerName": vars["signerName"]})["requestSignature"].(map[string]any)
		u, _ := link["url"].(string)
		if !strings.HasPrefix(u, srv.URL+"/sign/") || link["expiresAt"] == nil {
			t.Fatalf("RequestSigningLink: got %v, want a url of this server and an expiry", link)
		}
		return u
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	open := func(link string, want int) string {
		t.Helper()
		res, err := browser.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != want {
			t.Fatalf("GET %s: got %d, want %d\n%s", link, res.StatusCode, want, body)
		}
		return string(body)
	}
	first := request()
	if page := open(first, http.StatusOK); !strings.Contains(page, `name="signerName"`) {
		t.Errorf("the link's page has no signer's name field:\n%s", page)
	}
	if got := run("CancelSigningLink", map[string]any{"id": id, "party": "TENANT"})["cancelSignatureRequest"].(map[string]any); got["cancelled"] != true {
		t.Errorf("CancelSigningLink: got %v, want cancelled", got)
	}
	open(first, http.StatusGone)

	link := request()
	page := open(link, http.StatusOK)
	form := url.Values{"signerName": {"Marta Ruiz"}, "consent": {"yes"}}
	for _, field := range []string{"csrf", "document"} { // document: the draft's SHA-256, once the page has it
		if m := regexp.MustCompile(`name="` + field + `" value="([^"]*)"`).FindStringSubmatch(page); m != nil {
			form.Set(field, m[1])
		}
	}
	if form.Get("csrf") == "" {
		t.Fatalf("the link's page has no csrf field:\n%s", page)
	}
	res, err := browser.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("signing on the page: got %d", res.StatusCode)
	}
	node := status()
	if node["isSigned"] != true || strings.Join(parties(node), ",") != "AGENT CREDENTIAL,OWNER CREDENTIAL,TENANT LINK" {
		t.Errorf("SigningStatus after the tenant signed: got %v", node)
	}
}
