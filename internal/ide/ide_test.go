package ide

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The capture tab keeps one inventory id for each choice of parties
// required, whatever their order: the default's is the id the tab always
// had, and no two choices share one (the same id with other content would be
// CONFLICT on the shared demo database).
func TestEachChoiceOfPartiesHasItsCaptureInventory(t *testing.T) {
	if got := CaptureInventoryFor([]string{"OWNER", "AGENT"}); got != captureInventory {
		t.Errorf("AGENT and OWNER: got %s, want the tab's first id %s", got, captureInventory)
	}
	ids := captureInventories()
	if len(ids) != 7 {
		t.Fatalf("got %d ids, want one for each of the 7 non-empty choices: %v", len(ids), ids)
	}
	seen := map[string]string{}
	for choice, id := range ids {
		if other, ok := seen[id]; ok {
			t.Errorf("%s and %s share the id %s", choice, other, id)
		}
		seen[id] = choice
		if uuid.MustParse(id).Version() != 4 {
			t.Errorf("%s: %s is not a version 4 UUID as the others are", choice, id)
		}
	}
	if ids["AGENT,OWNER,TENANT"] != CaptureInventoryFor([]string{"TENANT", "AGENT", "OWNER"}).String() {
		t.Errorf("the panel's id for all three is not CaptureInventoryFor's")
	}
}

// The capture tab's variables require the API's default parties and name the
// tenant as the party a link is requested for.
func TestCaptureVariablesNameTheLinksParty(t *testing.T) {
	vars := CaptureVariables(Examples{})
	input := vars["input"].(map[string]any)
	if got := input["requiredSignatures"].([]string); !slices.Equal(got, []string{"AGENT", "OWNER"}) {
		t.Errorf("requiredSignatures: got %v, want AGENT and OWNER", got)
	}
	if vars["id"] != captureInventory.String() || input["id"] != captureInventory.String() {
		t.Errorf("ids: got %v and %v, want %s", vars["id"], input["id"], captureInventory)
	}
	if vars["party"] != "TENANT" || vars["signerName"] == "" {
		t.Errorf("the link's variables: got party %v, signerName %v; want TENANT and a name", vars["party"], vars["signerName"])
	}
}

func render(t *testing.T) (csp, page string) {
	t.Helper()
	rec := httptest.NewRecorder()
	Page("/graphql", uuid.New(), false, func(context.Context) Examples { return Examples{} }).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Header().Get("Content-Security-Policy"), string(body)
}

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|https?://|\bwss?://[a-z]`)

// The page starts GraphiQL with the Signing links panel: its script inline
// (the policy allows inline scripts and nothing from elsewhere), started
// with this server's endpoint, the capture document and an id for each
// choice of parties; with boxes for the parties, a party selector and a
// signer's name, and a link shown with its expiry and text to copy.
func TestThePageHasTheSigningPanel(t *testing.T) {
	csp, page := render(t)
	for _, want := range []string{"<script>" + signingPanel + "</script>", "plugins: [signingPlugin({", `"endpoint":"/graphql"`,
		"type: 'checkbox', name: 'requiredSignatures'", "h('select'", "'Signer\\'s name'", "href: openLink.url", "when(openLink.expiresAt)",
		"readOnly: true, value: openLink.url", "navigator.clipboard.writeText", "'Request '", "'Cancel '"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	for choice, id := range captureInventories() {
		if !strings.Contains(page, `"`+choice+`":"`+id+`"`) {
			t.Errorf("the panel is not given %s's id %s", choice, id)
		}
	}
	// The capture document, as the panel is given it, holds the operations
	// it runs by name.
	doc := regexp.MustCompile(`"document":("(?:[^"\\]|\\.)*")`).FindStringSubmatch(page)
	if doc == nil || !strings.Contains(doc[1], "requestSignature(input:") || !strings.Contains(doc[1], "cancelSignatureRequest(input:") {
		t.Fatalf("the panel is not given the capture document")
	}
	ran := regexp.MustCompile(`run\('(\w+)'`).FindAllStringSubmatch(signingPanel, -1)
	if len(ran) < 3 {
		t.Fatalf("the panel runs %d operations, want its status, request and cancel", len(ran))
	}
	for _, op := range ran {
		if !regexp.MustCompile(`(?m)^(query|mutation) ` + op[1] + `\(`).MatchString(CaptureQuery) {
			t.Errorf("the panel runs %s, which the capture document does not have", op[1])
		}
	}
	// Nothing from outside, and nothing the policy would block.
	if m := externalRef.FindString(signingPanel); m != "" {
		t.Errorf("the panel names an outside address: %s", m)
	}
	if strings.Contains(strings.ToLower(signingPanel), "</script") || strings.Contains(signingPanel, "eval(") || strings.Contains(signingPanel, "new Function") {
		t.Errorf("the panel's script would end the page's script element early, or needs 'unsafe-eval'")
	}
	if !regexp.MustCompile(`fetch\(config\.endpoint,`).MatchString(signingPanel) || strings.Count(signingPanel, "fetch(") != 1 {
		t.Errorf("the panel fetches other than the endpoint it is given")
	}
	for _, want := range []string{"default-src 'self'", "script-src 'self' 'unsafe-inline'", "connect-src 'self'", "form-action 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q: want %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q: want no eval and no other origin", csp)
	}
}

// The page's inline scripts, the panel's included, are JavaScript a browser
// parses: checked with Node.js where it is installed (CI's machine has it).
func TestThePagesScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	_, page := render(t)
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 3 {
		t.Fatalf("the page has %d inline scripts, want the two panels and the start", len(scripts))
	}
	for i, s := range scripts {
		file := filepath.Join(t.TempDir(), "script.js")
		if err := os.WriteFile(file, []byte(s[1]), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
			t.Errorf("inline script %d does not parse: %v\n%s", i, err, out)
		}
	}
}

// The page inlines the Live events panel, started with the live tab's
// document and the page's own fetcher: nothing from elsewhere, nothing the
// policy would block, no request but the fetcher's.
func TestThePageHasTheLivePanel(t *testing.T) {
	_, page := render(t)
	for _, want := range []string{"<script>" + livePanel + "</script>", `livePlugin({"document":`, "}, fetcher)]", `<link rel="icon" href="/favicon.ico">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if m := externalRef.FindString(livePanel); m != "" {
		t.Errorf("the panel names an outside address: %s", m)
	}
	if strings.Contains(strings.ToLower(livePanel), "</script") || strings.Contains(livePanel, "eval(") || strings.Contains(livePanel, "new Function") ||
		strings.Contains(livePanel, "fetch(") || strings.Contains(livePanel, "WebSocket") {
		t.Errorf("the panel's script would end the page's script element early, needs 'unsafe-eval', or connects other than through the page's fetcher")
	}
	if !strings.Contains(LiveQuery, "subscription Live(") || !strings.Contains(livePanel, "operationName: 'Live'") {
		t.Errorf("the panel runs an operation the live document does not have")
	}
}
