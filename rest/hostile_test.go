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
	paths = append(paths, base+"/inventories?x-company-id="+companyA+"&x-company-id="+companyB+"&page=1&page=2")
	for _, path := range paths {
		res, body := a.Get(t, path, http.Header{"X-Company-Id": {"\u00e9t\u00e9"}})
		if res.StatusCode >= 500 {
			t.Errorf("%s: got %d %s", path, res.StatusCode, body)
			continue
		}
		if res.StatusCode >= 400 && res.StatusCode != http.StatusMovedPermanently {
			var e struct {
				Success bool
				Error   struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Success || e.Error.Code == "" {
				t.Errorf("%s: %d with body %q: want the JSON error shape", path, res.StatusCode, body)
			}
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
