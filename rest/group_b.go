package rest

import (
	"encoding/json"
	"math"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Group B: {base_url} paths, the {success, timestamp, data} envelope and
// camelCase fields (spec sections 2.3 to 2.5).

// maxPage keeps page a GraphQL Int.
const maxPage = math.MaxInt32

type envelope struct {
	Success   bool   `json:"success"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

func writeEnvelope(w http.ResponseWriter, r *http.Request, data any) {
	writeJSON(w, r, http.StatusOK, envelope{Success: true, Timestamp: now(), Data: data})
}

// inventoryPage writes GraphQL's inventoryPage (rest/operations/
// b1_inventories.graphql and inventory_summary.graphql) as the list data of
// spec section 2.5, each element as section 2.3 types it: the price a
// number, and the PDF address "" while unsigned (the spec types it string,
// not "or null").
var (
	inventorySummary = members{"rentalPrice": asNumber, "pdfDownloadUrl": nullAsEmpty}
	inventoryPage    = members{"data": inventorySummary.list}
)

// writeInventoryPage writes the envelope around a page of inventories.
func writeInventoryPage(w http.ResponseWriter, r *http.Request, data []byte) {
	body := append([]byte(`{"success":true,"timestamp":"`), now()...)
	body = append(body, `","data":`...)
	body = inventoryPage.object(body, gjson.GetBytes(data, "inventoryPage"))
	writeRaw(w, r, http.StatusOK, append(body, '}'))
}

// inventoryDetail is the data of spec section 2.4.
type inventoryDetail struct {
	InventoryID string `json:"inventoryId"`
	Property    struct {
		PropertyID   string `json:"propertyId"`
		Code         string `json:"code"`
		Address      string `json:"address"`
		City         string `json:"city"`
		Neighborhood string `json:"neighborhood"`
	} `json:"property"`
	InventoryType     int         `json:"inventoryType"`
	InventoryTypeName string      `json:"inventoryTypeName"`
	IsSigned          bool        `json:"isSigned"`
	IsRemoteSigned    bool        `json:"isRemoteSigned"`
	RentalPrice       json.Number `json:"rentalPrice"`
	Currency          string      `json:"currency"`
	ApprovalCode      *string     `json:"approvalCode"`
	Signatures        struct {
		AgentSignatureDate *string `json:"agentSignatureDate"`
		OwnerSignatureDate *string `json:"ownerSignatureDate"`
		SignatureDate      *string `json:"signatureDate"`
	} `json:"signatures"`
	PDFDownloadURL string `json:"pdfDownloadUrl"` // "" while unsigned, as in the list
	Stats          struct {
		TotalEnvironments int `json:"totalEnvironments"`
		TotalItems        int `json:"totalItems"`
	} `json:"stats"`
	CreatedAt string `json:"createdAt"`
}

// B1 GET {base_url}/inventories
func (a *API) inventories(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the company, the filters, the order and the page, with the spec's defaults.
	company := p.company()
	kind := p.nullableInt("inventoryType", 0, 3)
	signed := p.nullableBool("isSigned")
	sortBy := p.oneOf("sortBy", "createdAt", false, "createdAt", "signatureDate")
	sortOrder := p.oneOf("sortOrder", "desc", false, "asc", "desc")
	page := p.int("page", 1, 1, maxPage, false)
	pageSize := p.pageSize()
	if p.err != nil {
		return p.err
	}
	where := map[string]any{}
	if kind != nil {
		where["inventoryType"] = inventorytype.Type(*kind).String()
	}
	if signed != nil {
		where["isSigned"] = *signed
	}
	field := map[string]string{"createdAt": "CREATED_AT", "signatureDate": "SIGNATURE_DATE"}[sortBy]
	// Call: one page of the company's inventories.
	vars := map[string]any{"page": page, "pageSize": pageSize, "where": where,
		"orderBy": map[string]any{"field": field, "direction": direction(sortOrder)}}
	data, err := a.runRaw(tenant.WithCompany(r.Context(), company), "b1_inventories", vars)
	if err != nil {
		return err
	}
	// Encode: the envelope around the list data.
	writeInventoryPage(w, r, data)
	return nil
}

// b2Node is B2's GraphQL result: section 2.4 with the signature dates and
// the tree still to regroup and count.
type b2Node struct {
	inventoryDetail
	AgentSignatureDate *string `json:"agentSignatureDate"`
	OwnerSignatureDate *string `json:"ownerSignatureDate"`
	SignatureDate      *string `json:"signatureDate"`
	Environments       []struct {
		Items []struct{} `json:"items"`
	} `json:"environments"`
}

// B2 GET {base_url}/inventories/details?InventoryId=
func (a *API) inventoryDetails(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the inventory and the company.
	id := p.uuid("InventoryId")
	company := p.company()
	if p.err != nil {
		return p.err
	}
	// Call: the node, which must be one of the company's inventories.
	n, err := node[b2Node](tenant.WithCompany(r.Context(), company), a, "b2_inventory_detail", id, "Inventory", "inventory")
	if err != nil {
		return err
	}
	// Encode: section 2.4, with the signature dates grouped and the tree counted.
	d := n.inventoryDetail
	d.Signatures.AgentSignatureDate = n.AgentSignatureDate
	d.Signatures.OwnerSignatureDate = n.OwnerSignatureDate
	d.Signatures.SignatureDate = n.SignatureDate
	d.Stats.TotalEnvironments = len(n.Environments)
	for _, env := range n.Environments {
		d.Stats.TotalItems += len(env.Items)
	}
	writeEnvelope(w, r, d)
	return nil
}

// B3 GET {base_url}/inventories/by-property?propertyId=
func (a *API) inventoriesByProperty(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the property, the company and the page.
	property := p.uuid("propertyId")
	company := p.company()
	page := p.int("page", 1, 1, maxPage, false)
	pageSize := p.pageSize()
	if p.err != nil {
		return p.err
	}
	// Call: the property, which must be the company's, and one page of its inventories.
	vars := map[string]any{"propertyId": property.String(), "page": page, "pageSize": pageSize}
	data, err := a.runRaw(tenant.WithCompany(r.Context(), company), "b3_inventories_by_property", vars)
	if err != nil || gjson.GetBytes(data, "property.__typename").Str != "Property" {
		if err == nil || apperr.CodeOf(err) == apperr.NotFound {
			return apperr.Errorf(apperr.NotFound, "property %s not found", property)
		}
		return err
	}
	// Encode: the envelope around the list data.
	writeInventoryPage(w, r, data)
	return nil
}

// B4 GET {base_url}/inventories/comparison?from=&to=
func (a *API) inventoryComparison(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the two inventories and the company.
	from, to := p.uuid("from"), p.uuid("to")
	company := p.company()
	if p.err != nil {
		return p.err
	}
	// Call: the comparison, which refuses inventories of two properties and
	// reads another company's as missing.
	var out struct {
		InventoryComparison json.RawMessage `json:"inventoryComparison"`
	}
	vars := map[string]any{"from": from.String(), "to": to.String()}
	if err := a.run(tenant.WithCompany(r.Context(), company), "b4_inventory_comparison", vars, &out); err != nil {
		return err
	}
	// Encode: the envelope around the comparison, as GraphQL shaped it.
	writeEnvelope(w, r, out.InventoryComparison)
	return nil
}
