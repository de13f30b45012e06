package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// notECMA matches what Go's RE2 takes in a pattern and JavaScript's RegExp
// (ECMA-262, which OpenAPI's JSON Schema patterns follow) refuses or reads
// otherwise: inline flags such as (?i), named groups in Python's (?P<…>)
// form, \A \z \Z \Q \E, POSIX classes, Unicode classes without the u flag,
// and possessive quantifiers. ajv, prism and generated clients skip or
// mis-validate a field whose pattern they cannot compile.
var notECMA = regexp.MustCompile(`\(\?[a-zA-Z]|\(\?P<|\\[AzZQE]|\[\[:|\\[pP]\{|[*+?}]\+`)

// The OpenAPI document describes the running server: its paths under the
// configured {base_url}, a server entry relative to where it is served, the
// company parameter as security schemes, a licence, and patterns that
// JavaScript tools compile as Go does.
func TestTheOpenAPIDocumentDescribesTheRunningServer(t *testing.T) {
	st := testdb.Open(t)
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), RESTBaseURL: "/legacy/v2"})
	res, raw := srv.Get(t, "/openapi.json", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/openapi.json: %d", res.StatusCode)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("not a valid OpenAPI document: %v", err)
	}
	for _, path := range []string{"/legacy/v2/inventories", "/legacy/v2/inventories/details", "/legacy/v2/inventories/by-property"} {
		if doc.Paths.Find(path) == nil {
			t.Errorf("no path %s: group B must be under the configured base URL", path)
		}
	}
	if strings.Contains(string(raw), `"/api/v1/`) {
		t.Errorf("the document still names the default base URL's paths")
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/" {
		t.Errorf("servers: got %+v, want one, relative to the document", doc.Servers)
	}
	for _, name := range []string{"companyHeader", "companyQuery"} {
		if s := doc.Components.SecuritySchemes[name]; s == nil || s.Value.Type != "apiKey" {
			t.Errorf("security scheme %s: got %+v, want an apiKey for the company", name, s)
		}
	}
	if op := doc.Paths.Find("/legacy/v2/inventories").Get; op.Security == nil || len(*op.Security) != 2 {
		t.Errorf("B1 security: got %+v, want the header or the query parameter", op.Security)
	}
	if doc.Info.License == nil || doc.Info.License.Name == "" {
		t.Errorf("info.license: got %+v, want one", doc.Info.License)
	}

	var whole any
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	patterns := 0
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if p, ok := child.(string); ok && k == "pattern" {
					patterns++
					if _, err := regexp.Compile(p); err != nil || notECMA.MatchString(p) {
						t.Errorf("%s: pattern %q is not one both Go and ECMA-262 read alike (%v)", at, p, err)
					}
					continue
				}
				walk(child, at+"/"+k)
			}
		case []any:
			for _, child := range v {
				walk(child, at+"[]")
			}
		}
	}
	walk(whole, "")
	if patterns == 0 {
		t.Error("no pattern found: the walk is broken")
	}
}
