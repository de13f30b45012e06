package graph_test

import (
	"fmt"
	"regexp"
	"testing"
)

// Ids are spelled Id across the schema (propertyId), as the legacy REST
// contract and JavaScript clients write them. The ID spelling that entgql
// generated first still works, deprecated, with the same answers.
func TestIdsAreSpelledIdAndTheOldSpellingStillWorks(t *testing.T) {
	srv, _ := demo(t)
	var first struct {
		Inventories struct {
			Edges []struct{ Node struct{ PropertyID string } }
		}
	}
	srv.MustData(t, companyA, `{ inventories(first: 1) { edges { node { propertyId } } } }`, nil, &first)
	property := first.Inventories.Edges[0].Node.PropertyID
	type page struct {
		InventoryPage struct {
			TotalRecords int
			Data         []struct {
				PropertyId string `json:"propertyId"`
				PropertyID string `json:"propertyID"`
			} `json:"data"`
		}
	}
	var spelledId, spelledID page
	srv.MustData(t, companyA, fmt.Sprintf(`{ inventoryPage(where: {propertyId: %q}) { totalRecords data { propertyId propertyID } } }`, property), nil, &spelledId)
	srv.MustData(t, companyA, fmt.Sprintf(`{ inventoryPage(where: {propertyID: %q}) { totalRecords data { propertyId propertyID } } }`, property), nil, &spelledID)
	if spelledId.InventoryPage.TotalRecords == 0 || spelledId.InventoryPage.TotalRecords != spelledID.InventoryPage.TotalRecords {
		t.Errorf("filtering by propertyId found %d, by propertyID %d: want the same, and some", spelledId.InventoryPage.TotalRecords, spelledID.InventoryPage.TotalRecords)
	}
	for _, inv := range spelledId.InventoryPage.Data {
		if inv.PropertyId != property || inv.PropertyID != property {
			t.Errorf("propertyId %s, propertyID %s: want both %s", inv.PropertyId, inv.PropertyID, property)
		}
	}

	var schema struct {
		Schema struct {
			Types []struct {
				Name   string
				Fields []struct {
					Name, DeprecationReason string
					IsDeprecated            bool
				}
				InputFields []struct {
					Name, DeprecationReason string
					IsDeprecated            bool
				}
			}
		} `json:"__schema"`
	}
	srv.MustData(t, "", `{ __schema { types { name
		fields(includeDeprecated: true) { name isDeprecated deprecationReason }
		inputFields(includeDeprecated: true) { name isDeprecated deprecationReason } } } }`, nil, &schema)
	oldSpelling := regexp.MustCompile(`^[a-z][A-Za-z0-9]*ID(NEQ|In|NotIn|GT|GTE|LT|LTE|IsNil|NotNil)?$`)
	checked := 0
	for _, typ := range schema.Schema.Types {
		names := map[string]bool{}
		for _, f := range append(typ.Fields, typ.InputFields...) {
			names[f.Name] = true
		}
		for _, f := range append(typ.Fields, typ.InputFields...) {
			if !oldSpelling.MatchString(f.Name) {
				continue
			}
			checked++
			twin := regexp.MustCompile(`ID(NEQ|In|NotIn|GT|GTE|LT|LTE|IsNil|NotNil)?$`).ReplaceAllString(f.Name, "Id$1")
			if !f.IsDeprecated || !names[twin] {
				t.Errorf("%s.%s: deprecated %v, %s there %v; want it deprecated beside %s", typ.Name, f.Name, f.IsDeprecated, twin, names[twin], twin)
			}
		}
	}
	if checked == 0 {
		t.Error("no field spelled ID found: the walk is broken")
	}
}
