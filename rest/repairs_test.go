package rest_test

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// B5 pages the repair list like B1, and its CSV (the whole list) parses back
// to the same rows, opens in a spreadsheet as UTF-8, and keeps text cells
// text.
func TestB5RepairsPageAndExportAsCSV(t *testing.T) {
	a := demo(t)
	var pages [][]string
	var all []string
	type property struct{ code, id string }
	var properties []property // of each repair, in the list's order
	for page := 1; ; page++ {
		res := a.get(t, "/api/v1/repairs"+query("page", strconv.Itoa(page), "pageSize", "7", "x-company-id", companyA))
		var got struct {
			Success bool
			Data    struct {
				Data []struct {
					ItemID      string `json:"itemId"`
					Name        string
					Environment struct {
						Inventory struct {
							Property struct {
								PropertyID string `json:"propertyId"`
								Code, City string
							}
						}
					}
				}
				TotalRecords int  `json:"totalRecords"`
				HasNextPage  bool `json:"hasNextPage"`
			}
		}
		if err := json.Unmarshal(res.body, &got); err != nil || res.status != http.StatusOK || !got.Success {
			t.Fatalf("B5 page %d: %d %s", page, res.status, res.body)
		}
		var ids []string
		for _, r := range got.Data.Data {
			ids = append(ids, r.ItemID)
			p := r.Environment.Inventory.Property
			properties = append(properties, property{p.Code, p.PropertyID})
			if r.Environment.Inventory.Property.City == "" {
				t.Errorf("repair %s: no city", r.ItemID)
			}
		}
		pages, all = append(pages, ids), append(all, ids...)
		if !got.Data.HasNextPage {
			if len(all) != got.Data.TotalRecords || len(all) < 10 {
				t.Fatalf("walked %d repairs, the list says %d", len(all), got.Data.TotalRecords)
			}
			break
		}
	}
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("pages %v: want every repair once", pages)
	}
	// By property: its code, then its id (the rooms and items within are
	// checked by the graph package's walk and the CSV export's test).
	if !slices.IsSortedFunc(properties, func(a, b property) int { return cmp.Or(cmp.Compare(a.code, b.code), cmp.Compare(a.id, b.id)) }) {
		t.Errorf("the repairs' properties, in the list's order: %v; want them by code, then id", properties)
	}

	res := a.get(t, "/api/v1/repairs"+query("format", "csv", "x-company-id", companyA))
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(string(res.body), "\uFEFFpropertyId,") || !strings.Contains(string(res.body), "\r\n") {
		t.Fatalf("B5 CSV: %d %s %.200q", res.status, res.header.Get("Content-Type"), res.body)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(res.body), "\uFEFF"))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	var csvIDs []string
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			t.Fatalf("row %v has %d cells, the header %d", row, len(row), len(rows[0]))
		}
		csvIDs = append(csvIDs, row[8])
	}
	if !slices.Equal(csvIDs, all) {
		t.Errorf("the CSV holds %d repairs, the pages %d: want the same rows", len(csvIDs), len(all))
	}

	for name, path := range map[string]string{
		"a bad format": "/api/v1/repairs" + query("format", "xlsx", "x-company-id", companyA),
		"a bad date":   "/api/v1/repairs" + query("since", "yesterday", "x-company-id", companyA),
		"a bad id":     "/api/v1/repairs" + query("propertyId", "x", "x-company-id", companyA),
		"no company":   "/api/v1/repairs",
	} {
		if res := a.get(t, path); res.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, res.status, res.body)
		}
	}
}
