package tenant_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/tenant"
)

// TestNamedIsTheOneReaderOfTheCompany: the header and the query parameter
// (any case) are read alike, and once a company is named every value must
// be the same canonical UUID (fail closed); the refusals say the same
// whoever reads (GraphQL, REST, a credential's check).
func TestNamedIsTheOneReaderOfTheCompany(t *testing.T) {
	a, b := uuid.NewString(), uuid.NewString()
	for _, tc := range []struct {
		name    string
		header  []string
		query   url.Values
		want    string
		present bool
		refused string
	}{
		{name: "none"},
		{name: "the header", header: []string{a}, want: a, present: true},
		{name: "the parameter, any case", query: url.Values{"X-COMPANY-ID": {a}}, want: a, present: true},
		{name: "both, agreeing", header: []string{" " + a}, query: url.Values{"x-company-id": {a}}, want: a, present: true},
		{name: "both, disagreeing", header: []string{a}, query: url.Values{"x-company-id": {b}}, present: true, refused: "names different companies"},
		{name: "twice in the header", header: []string{a, b}, present: true, refused: "names different companies"},
		{name: "empty", header: []string{""}, present: true, refused: "is empty"},
		{name: "empty among others", query: url.Values{"x-company-id": {a, ""}}, present: true, refused: "is empty"},
		{name: "not canonical", header: []string{"{" + a + "}"}, present: true, refused: "is not a UUID"},
		{name: "not a UUID", header: []string{"acme"}, present: true, refused: `"acme" is not a UUID`},
	} {
		header := http.Header{}
		for _, v := range tc.header {
			header.Add(tenant.Header, v)
		}
		id, present, err := tenant.Named(header, tc.query, "field")
		switch {
		case present != tc.present:
			t.Errorf("%s: present %v, want %v", tc.name, present, tc.present)
		case tc.refused != "" && (err == nil || err.Field != "field" || !strings.Contains(err.Message, tc.refused)):
			t.Errorf("%s: %v, want INVALID_ARGUMENT on field saying %q", tc.name, err, tc.refused)
		case tc.refused == "" && (err != nil || tc.present && id.String() != tc.want):
			t.Errorf("%s: %s, %v; want %s", tc.name, id, err, tc.want)
		}
	}
}
