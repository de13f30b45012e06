package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Client input never yields a 5xx or a body that is not the JSON error shape.
func TestHostileInputNeverFailsTheServer(t *testing.T) {
	a := demo(t)
	long := strings.Repeat("9", 5000)
	odd := []string{"", "%00", "null", "true", "-1", "1e9", "0x10", "NaN", long, "%F0%9F%92%A5", "'%20OR%201=1--", "%2e%2e%2f", "11111111-1111-4111-8111-11111111111%27"}
	var paths []string
	for _, v := range odd {
		paths = append(paths,
			"/inventory/detail/"+v,
			"/inventory/download-pdf/"+v,
			"/inventory/download-photos/itemDiagnostic/"+v,
			"/property/get_property_uuid/"+v,
			"/property/get_properties/"+companyA+"?page="+v+"&sorter="+v,
			"/property/get_properties/"+v+"?page=1&sorter=asc",
			base+"/inventories?x-company-id="+companyA+"&inventoryType="+v+"&isSigned="+v+"&sortBy="+v+"&sortOrder="+v+"&page="+v+"&pageSize="+v,
			base+"/inventories?x-company-id="+v,
			base+"/inventories/details?x-company-id="+companyA+"&InventoryId="+v,
			base+"/inventories/by-property?x-company-id="+companyA+"&propertyId="+v+"&page="+v,
			"/files/photos/"+v+"?expires="+v+"&signature="+v,
		)
	}
	// Requests that pass every check reach the GraphQL executor and the database.
	paths = append(paths,
		base+"/inventories?x-company-id="+companyA+"&x-company-id="+companyB+"&page=1&page=2",
		base+"/inventories?page=2147483647&pageSize=100&sortBy=SIGNATUREDATE&sortOrder=ASC",
		base+"/inventories/by-property?propertyId="+companyA+"&page=2147483647&pageSize=100",
		"/property/get_properties/"+companyA+"?page=2147483647&sorter=DESC",
	)
	// Each path goes without a company, with a valid one (so that most reach
	// GraphQL), and with a malformed one.
	companies := []http.Header{nil, {"X-Company-Id": {companyA}}, {"X-Company-Id": {"\u00e9t\u00e9"}}}
	for _, header := range companies {
		for _, path := range paths {
			checkNoServerError(t, a, path, header)
		}
	}
}

// checkNoServerError fails the test if path answers 5xx, or 4xx in another
// shape than the JSON error.
func checkNoServerError(t *testing.T, a *api, path string, header http.Header) {
	t.Helper()
	res, body := a.Get(t, path, header)
	if res.StatusCode >= 500 {
		t.Errorf("%s (%v): got %d %s", path, header, res.StatusCode, body)
		return
	}
	if res.StatusCode >= 400 {
		var e struct {
			Success bool
			Error   struct{ Code, Message string }
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Success || e.Error.Code == "" {
			t.Errorf("%s (%v): %d with body %q: want the JSON error shape", path, header, res.StatusCode, body)
		}
	}
}

// GraphQL answers malformed or hostile operations with errors about the
// request, never with an internal error.
func TestHostileGraphQLNeverFailsTheServer(t *testing.T) {
	a := demo(t)
	for _, q := range []string{
		"", "{", "{ nope }", "query { inventories(first: -1) { totalCount } }",
		`{ node(id: "x") { id } }`, `{ nodes(ids: []) { id } }`,
		`{ inventories(after: "AAAA") { totalCount } }`,
		`{ inventoryPage(page: 2147483647, pageSize: 100) { totalRecords data { id } } }`,
		`{ inventories(where: {inventoryTypeIn: []}) { totalCount } }`,
		`{ inventories(where: {not: {not: {not: {isSigned: true}}}}) { totalCount } }`,
		`{ properties(where: {cityContainsFold: "%' OR 1=1 --"}) { totalCount } }`,
		`{ __type(name: "Inventory") { fields { name } } }`,
	} {
		res := a.GraphQL(t, companyA, q, nil)
		for _, e := range res.Errors {
			if e.Code() == "INTERNAL" {
				t.Errorf("%q: internal error %+v", q, e)
			}
		}
	}
}

// A query string that cannot be read is refused, never read in part. Go's
// URL.Query() drops a pair holding ';' or a bad %-escape, so
// "x-company-id=<company B>;" used to read as no company at all and A1, A2,
// A3 and A5 served company A's record unscoped; B1 served an unfiltered list
// for "isSigned=true;".
func TestMalformedQueryStringsAreRefused(t *testing.T) {
	a := demoWithFiles(t)
	records := lookupsByUUID(t, a)
	for endpoint, path := range records {
		for _, tt := range []struct{ query, parameter string }{
			{"?x-company-id=" + companyB + ";", "x-company-id"},
			{"?x-company-id=" + companyB + "%zz", "x-company-id"},
			{"?x-company-id=%zz", "x-company-id"},
			{"?page=1;x-company-id=" + companyB, "page"},
			{"?x-company-id%zz=" + companyB, ""}, // no key to name: the message says where
		} {
			res := a.get(t, path+tt.query)
			code, parameter := errorOf(t, res)
			if res.status != http.StatusBadRequest || code != "INVALID_ARGUMENT" || parameter != tt.parameter || !strings.Contains(string(res.body), "byte 1") {
				t.Errorf("%s %s: got %d %s on %q: %.200s; want 400 INVALID_ARGUMENT on %q saying where", endpoint, tt.query, res.status, code, parameter, res.body, tt.parameter)
			}
		}
	}

	b1 := base + "/inventories?x-company-id=" + companyA + "&isSigned=true;"
	res := a.get(t, b1)
	if code, parameter := errorOf(t, res); res.status != http.StatusBadRequest || code != "INVALID_ARGUMENT" || parameter != "isSigned" {
		t.Errorf("B1 %s: got %d %s on %q, want 400 INVALID_ARGUMENT on isSigned", b1, res.status, code, parameter)
	}

	// Every REST endpoint reads its query the same way, the file downloads too.
	for _, path := range []string{records["A1"], records["A2"], records["A3"], records["A5"],
		"/property/get_properties/" + companyA, base + "/inventories", base + "/inventories/details", base + "/inventories/by-property",
		"/files/photos/a-1.jpg", "/openapi.json"} {
		res, body := a.Get(t, path+"?expires=1&signature=%zz", nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"parameter":"signature"`) {
			t.Errorf("%s with a bad %%-escape: got %d %s, want 400 naming signature", path, res.StatusCode, body)
		}
	}
}

// Where a company is optional (A1, A2, A3, A5), naming one in any way scopes
// the lookup or fails it: an empty value, a second value, the key in another
// case, or the header sent twice never read as "no company" (which served
// company A's records to a caller naming company B).
func TestACompanyNamedAnyWayScopesTheLookupOrFails(t *testing.T) {
	a := demoWithFiles(t)
	records := lookupsByUUID(t, a) // company A's records
	for endpoint, path := range records {
		for _, tt := range []struct {
			name   string
			query  string
			header http.Header
			status int
		}{
			{"empty", "?x-company-id=", nil, http.StatusBadRequest},
			{"blank", "?x-company-id=+", nil, http.StatusBadRequest},
			{"empty, then B", "?x-company-id=&x-company-id=" + companyB, nil, http.StatusBadRequest},
			{"A, then B", "?x-company-id=" + companyA + "&x-company-id=" + companyB, nil, http.StatusBadRequest},
			{"B, key in another case", "?X-Company-Id=" + companyB, nil, http.StatusNotFound},
			{"empty header", "", http.Header{"X-Company-Id": {""}}, http.StatusBadRequest},
			{"headers A and B", "", http.Header{"X-Company-Id": {companyA, companyB}}, http.StatusBadRequest},
			{"B in the header, A in the query", "?x-company-id=" + companyA, http.Header{"X-Company-Id": {companyB}}, http.StatusBadRequest},
			{"A, key in another case", "?X-COMPANY-ID=" + companyA, nil, http.StatusOK},
		} {
			res, body := a.Get(t, path+tt.query, tt.header)
			if res.StatusCode != tt.status {
				t.Errorf("%s, company %s: got %d %.200s, want %d", endpoint, tt.name, res.StatusCode, body, tt.status)
			}
		}
	}
}

// lookupsByUUID are the paths of the legacy lookups where the spec names no
// company (A1, A2, A3, A5), each of one of company A's records.
func lookupsByUUID(t *testing.T, a *api) map[string]string {
	t.Helper()
	inv := signedInventory(t, a)
	var a1 a1Named
	a.getJSON(t, "/inventory/detail/"+inv.InventoryID, &a1)
	item := a1.EnvironmentDiagnostics[0].ItemDiagnostic[0].ItemDiagnosticID
	return map[string]string{
		"A1": "/inventory/detail/" + inv.InventoryID,
		"A2": "/inventory/download-pdf/" + inv.InventoryID,
		"A3": "/inventory/download-photos/itemDiagnostic/" + item,
		"A5": "/property/get_property_uuid/" + inv.Property.PropertyID,
	}
}
