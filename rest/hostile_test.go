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
