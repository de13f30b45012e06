package rest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/auth"
)

// What client generators (openapi-typescript, openapi-generator) read off the
// document: B1's isSigned filter is a boolean, absent or null for no filter
// (not a string with a pattern, which typed it string); group B's company
// is a required parameter in header mode, where nothing else names it, as
// the spec lists it (security schemes are not enforced by generated
// clients), and optional with credentials, which name it. CI compiles a call
// against a client generated from the document (.ci/openapi-client).
func TestGeneratedClientsTypeIsSignedAsABooleanAndRequireTheCompany(t *testing.T) {
	type param struct {
		Name, In string
		Required bool
		Schema   struct{ Type any }
	}
	type doc struct {
		Paths map[string]map[string]struct{ Parameters []param }
	}
	read := func(mode auth.Mode) doc {
		var d doc
		if err := json.Unmarshal(openAPIFor(DefaultBaseURL, mode), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	header, apikey := read(auth.Header), read(auth.APIKey)

	var isSigned *param
	for _, p := range header.Paths[DefaultBaseURL+"/inventories"]["get"].Parameters {
		if p.Name == "isSigned" {
			isSigned = &p
		}
	}
	if isSigned == nil || isSigned.Required || !slices.Equal(toStrings(isSigned.Schema.Type), []string{"boolean", "null"}) {
		t.Errorf("B1's isSigned: %+v; want an optional boolean or null", isSigned)
	}

	groupB := 0
	for path, ops := range header.Paths {
		if !strings.HasPrefix(path, DefaultBaseURL+"/") {
			continue
		}
		groupB++
		for method := range ops {
			company := func(d doc) *param {
				for _, p := range d.Paths[path][method].Parameters {
					if p.Name == "x-company-id" && p.In == "query" {
						return &p
					}
				}
				return nil
			}
			if p := company(header); p == nil || !p.Required {
				t.Errorf("%s %s in header mode: x-company-id %+v, want it required", method, path, p)
			}
			if p := company(apikey); p == nil || p.Required {
				t.Errorf("%s %s with API keys: x-company-id %+v, want it optional", method, path, p)
			}
		}
	}
	if groupB < 6 {
		t.Errorf("%d group B paths, want 6", groupB)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, s := range list {
		str, _ := s.(string)
		out = append(out, str)
	}
	return out
}
