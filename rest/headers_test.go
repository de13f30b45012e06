package rest_test

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Every answer carries nosniff; company data (REST, GraphQL, the signed PDF,
// errors) is never stored by browsers or proxies; what is the same for
// everyone may be cached; the IDE page cannot be framed.
func TestEveryAnswerCarriesItsSecurityHeaders(t *testing.T) {
	a := demoWithFiles(t)
	pdf, photo := downloadURLs(t, a, strings.TrimPrefix(a.URL, "http://"), nil)
	inv := signedInventory(t, a)
	gqlGet := "/graphql?query=" + url.QueryEscape(`{ inventories(first: 1) { totalCount } }`)
	company := http.Header{"X-Company-Id": {companyA}}
	for _, tt := range []struct {
		what, path   string
		header       http.Header
		status       int
		cacheControl string // "" when checked by cachedAtMostAsLongAsTheURL
	}{
		{"REST group A", "/inventory/detail/" + inv.InventoryID, nil, http.StatusOK, "no-store"},
		{"REST group B", base + "/inventories" + query("x-company-id", companyA), nil, http.StatusOK, "no-store"},
		{"REST error", base + "/inventories", nil, http.StatusBadRequest, "no-store"},
		{"unknown path", "/nothing-here", nil, http.StatusNotFound, "no-store"},
		{"GraphQL over GET", gqlGet, company, http.StatusOK, "no-store"},
		{"signed PDF", strings.TrimPrefix(pdf, a.URL), nil, http.StatusOK, "no-store"},
		{"signed PDF, a range", strings.TrimPrefix(pdf, a.URL), http.Header{"Range": {"bytes=0-4"}}, http.StatusPartialContent, "no-store"},
		{"photo", strings.TrimPrefix(photo, a.URL), nil, http.StatusOK, ""},
		{"health", "/healthz", nil, http.StatusOK, "no-store"},
		{"IDE page", "/", nil, http.StatusOK, "no-store"},
		{"IDE asset", "/ide/graphiql.min.js", nil, http.StatusOK, "public, max-age=86400"},
		{"OpenAPI document", "/openapi.json", nil, http.StatusOK, "public, max-age=300"},
	} {
		res, _ := a.Get(t, tt.path, tt.header)
		h := res.Header
		if res.StatusCode != tt.status || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: got %d, X-Content-Type-Options %q; want %d and nosniff", tt.what, res.StatusCode, h.Get("X-Content-Type-Options"), tt.status)
		}
		if cc := h.Get("Cache-Control"); tt.cacheControl == "" && !cachedAtMostAsLongAsTheURL(cc) || tt.cacheControl != "" && cc != tt.cacheControl {
			t.Errorf("%s: Cache-Control %q, want %q", tt.what, cc, tt.cacheControl)
		}
	}
	post, err := http.Post(a.URL+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusOK || post.Header.Get("Cache-Control") != "no-store" || post.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GraphQL over POST: got %d %v, want 200 with no-store and nosniff", post.StatusCode, post.Header)
	}
}

// The IDE page cannot be framed by another site, and still works: its
// policy lets it load what it loads (its assets from /ide/, its inline start
// script) and query /graphql.
func TestTheIDECannotBeFramedAndStillWorks(t *testing.T) {
	a := demo(t)
	res, page := a.Get(t, "/", nil)
	csp := res.Header.Get("Content-Security-Policy")
	directives := map[string]string{}
	for d := range strings.SplitSeq(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	if res.StatusCode != http.StatusOK || directives["frame-ancestors"] != "'none'" || res.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("IDE page: got %d, CSP %q, X-Frame-Options %q; want frame-ancestors 'none' and DENY", res.StatusCode, csp, res.Header.Get("X-Frame-Options"))
	}
	// Everything the page loads is served, from this server, as what it is.
	assets := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllSubmatch(page, -1)
	if len(assets) < 4 {
		t.Fatalf("the IDE page loads %d assets, want its scripts and stylesheet", len(assets))
	}
	for _, m := range assets {
		path := string(m[1])
		asset, body := a.Get(t, path, nil)
		want, prefix, least := "text/javascript", "/ide/", 1000
		switch {
		case strings.HasSuffix(path, ".css"):
			want = "text/css"
		case path == "/favicon.ico": // where browsers look for it anyway
			want, prefix, least = "image/x-icon", "/favicon.ico", 100
		}
		if !strings.HasPrefix(path, prefix) || asset.StatusCode != http.StatusOK || !strings.HasPrefix(asset.Header.Get("Content-Type"), want) || len(body) < least {
			t.Errorf("IDE asset %s: got %d %s with %d bytes, want it served from %s as %s", path, asset.StatusCode, asset.Header.Get("Content-Type"), len(body), prefix, want)
		}
	}
	// The page starts GraphiQL with an inline script: the policy must allow it.
	if bytes.Contains(page, []byte("<script>")) && !strings.Contains(directives["script-src"], "'unsafe-inline'") {
		t.Errorf("script-src %q would block the page's inline script", directives["script-src"])
	}
	if !strings.Contains(directives["script-src"], "'self'") || !strings.Contains(directives["connect-src"], "'self'") {
		t.Errorf("CSP %q: want scripts and /graphql from this server allowed", csp)
	}
}
