package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Group A: path-style ids and PascalCase fields (spec sections 2.1, 2.2).

// legacyInventory writes GraphQL's answer to rest/operations/
// a1_inventory_detail.graphql as the inventory detail of spec section 2.1:
// its aliases spell the legacy names, and the property type is the legacy
// object.
var legacyInventory = members{"Property": members{"PropertyType": typeNameObject}.object}

// legacyProperty is the property of spec section 2.2.
type legacyProperty struct {
	PropertyID   string   `json:"PropertyId"`
	Address      string   `json:"Address"`
	Neighborhood string   `json:"Neighborhood"`
	Code         string   `json:"Code"`
	City         string   `json:"City"`
	CreationDate string   `json:"CreationDate"`
	IsActive     bool     `json:"IsActive"`
	Detail       *string  `json:"Detail"`
	PropertyType typeName `json:"PropertyType"`
}

// legacyPropertyDetail is A5's body: the property, its number of levels and
// its inventories.
type legacyPropertyDetail struct {
	legacyProperty
	Levels      int                            `json:"Levels"`
	Inventories nodes[legacyPropertyInventory] `json:"Inventories"`
}

type legacyPropertyInventory struct {
	InventoryID       string  `json:"InventoryId"`
	InventoryType     int     `json:"InventoryType"`
	InventoryTypeName string  `json:"InventoryTypeName"`
	RentalPrice       string  `json:"RentalPrice"`
	Currency          string  `json:"Currency"`
	IsSigned          bool    `json:"IsSigned"`
	IsRemoteSigned    bool    `json:"IsRemoteSigned"`
	ApprovalCode      *string `json:"Approval_Code"`
	CreationDate      string  `json:"CreationDate"`
	SignatureDate     *string `json:"SignatureDate"`
}

// legacyPropertyFields writes GraphQL's LegacyProperty (rest/operations/
// legacy_property.graphql) as A4's list element: the property type as the
// legacy {"typeName": …} object.
var legacyPropertyFields = members{"PropertyType": typeNameObject}

// propertyListMeta is the meta of A4's body (data, meta and newOffset).
type propertyListMeta struct {
	Total       int  `json:"total"`
	LastPage    int  `json:"lastPage"`
	CurrentPage int  `json:"currentPage"`
	PerPage     int  `json:"perPage"`
	Prev        *int `json:"prev"`
	Next        *int `json:"next"`
}

// byUUID scopes the lookup of record that the spec gives no company: with
// x-company-id it is the company's own; without, the record is found by its
// UUID alone, the legacy contract (see docs/decisions.md), and the audit line
// names the record and the caller. A request already refused reads nothing,
// so it is not audited.
func byUUID(r *http.Request, p *params, endpoint string, record uuid.UUID) context.Context {
	company, ok := p.optionalCompany()
	switch {
	case p.err != nil:
		return r.Context()
	case ok:
		return tenant.WithCompany(r.Context(), company)
	}
	return tenant.UnrestrictedRecord(r.Context(), endpoint+": legacy lookup by UUID without a company", record)
}

// A1 GET /inventory/detail/{inventoryId}
func (a *API) inventoryDetail(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the inventory id, and the company if one is sent.
	id := p.uuid("inventoryId")
	ctx := byUUID(r, p, "A1", id)
	if p.err != nil {
		return p.err
	}
	// Call: the node, which must be an inventory.
	inventory, err := a.nodeOf(ctx, "a1_inventory_detail", id, "Inventory", "inventory")
	if err != nil {
		return err
	}
	// Encode: section 2.1, GraphQL's bytes with the legacy property type.
	writeRaw(w, r, http.StatusOK, legacyInventory.object(nil, inventory))
	return nil
}

// A4 GET /property/get_properties/{companyId}?page=&sorter=
func (a *API) properties(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: company from the path (a header, if sent, must agree), page and sorter required.
	company := p.uuid("companyId")
	if own, bound := tenant.Bound(r.Context()); bound && p.err == nil && company != own {
		return &apperr.Error{Code: apperr.Forbidden, Field: "companyId", Message: "is another company than your credential's"}
	}
	if other, ok := p.optionalCompany(); ok && other != company && p.err == nil {
		p.fail(companyParam, "names a different company from the path's companyId")
	}
	page := p.int("page", 1, 1, maxPage, true)
	sorter := p.oneOf("sorter", "", true, "asc", "desc")
	if p.err != nil {
		return p.err
	}
	// Call: one page of 20, by creation date.
	vars := map[string]any{"page": page, "direction": direction(sorter)}
	data, err := a.runRaw(tenant.WithCompany(r.Context(), company), "a4_properties", vars)
	if err != nil {
		return err
	}
	// Encode: data, meta and newOffset (the next page to ask for, -1 after the last).
	answer := gjson.GetBytes(data, "propertyPage")
	m := metaOf(answer)
	meta, newOffset := propertyListMeta{Total: m.TotalRecords, LastPage: m.TotalPages, CurrentPage: m.Page, PerPage: m.PageSize}, -1
	if m.HasPreviousPage {
		prev := m.Page - 1
		meta.Prev = &prev
	}
	if m.HasNextPage {
		next := m.Page + 1
		meta.Next, newOffset = &next, next
	}
	encoded, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	body := legacyPropertyFields.list([]byte(`{"data":`), answer.Get("data"))
	body = append(append(append(body, `,"meta":`...), encoded...), `,"newOffset":`...)
	writeRaw(w, r, http.StatusOK, append(strconv.AppendInt(body, int64(newOffset), 10), '}'))
	return nil
}

// A5 GET /property/get_property_uuid/{propertyId}
func (a *API) property(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the property id, and the company if one is sent.
	id := p.uuid("propertyId")
	ctx := byUUID(r, p, "A5", id)
	if p.err != nil {
		return p.err
	}
	// Call: the node, which must be a property.
	property, err := node[legacyPropertyDetail](ctx, a, "a5_property", id, "Property", "property")
	if err != nil {
		return err
	}
	// Encode: the property with its inventories.
	writeJSON(w, r, http.StatusOK, property)
	return nil
}

// direction maps asc/desc to GraphQL's OrderDirection.
func direction(order string) string {
	if order == "asc" {
		return "ASC"
	}
	return "DESC"
}
