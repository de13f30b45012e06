package rest

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// repair is one element of B5's list: an item to repair with where it is.
type repair struct {
	ItemID      string `json:"itemId"`
	Name        string `json:"name"`
	Rating      int    `json:"rating"`
	Description string `json:"description"`
	Material    struct {
		Name string `json:"name"`
	} `json:"material"`
	Environment struct {
		EnvironmentID string `json:"environmentId"`
		Name          string `json:"name"`
		Level         int    `json:"level"`
		Inventory     struct {
			InventoryID   string  `json:"inventoryId"`
			SignatureDate *string `json:"signatureDate"`
			Property      struct {
				PropertyID string `json:"propertyId"`
				Code       string `json:"code"`
				Address    string `json:"address"`
				City       string `json:"city"`
			} `json:"property"`
		} `json:"inventory"`
	} `json:"environment"`
}

type repairList struct {
	Data            []repair `json:"data"`
	Page            int      `json:"page"`
	PageSize        int      `json:"pageSize"`
	TotalRecords    int      `json:"totalRecords"`
	TotalPages      int      `json:"totalPages"`
	HasPreviousPage bool     `json:"hasPreviousPage"`
	HasNextPage     bool     `json:"hasNextPage"`
}

// maxCSVRepairs bounds a CSV export: the whole list, read a page at a time,
// up to this many rows; a larger list must be narrowed.
const maxCSVRepairs = 10_000

// B5 GET {base_url}/repairs?page=&pageSize=&city=&propertyId=&since=&format=json|csv
func (a *API) repairs(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the company, the filters, the page and the format.
	company := p.company()
	where := map[string]any{}
	if city, ok := p.query("city"); ok && city != "" {
		where["city"] = city
	}
	if _, ok := p.query("propertyId"); ok {
		where["propertyId"] = p.uuid("propertyId").String()
	}
	if since, ok := p.query("since"); ok {
		if _, err := time.Parse(time.RFC3339, since); err != nil {
			p.fail("since", "%s is not an RFC 3339 time (2025-01-31T00:00:00Z)", apperr.Quote(since))
		}
		where["since"] = since
	}
	page := p.int("page", 1, 1, maxPage, false)
	pageSize := p.pageSize()
	format := p.oneOf("format", "json", false, "json", "csv")
	if p.err != nil {
		return p.err
	}
	ctx := tenant.WithCompany(r.Context(), company)
	fetch := func(page, pageSize int) (repairList, error) {
		var out struct {
			RepairPage repairList `json:"repairPage"`
		}
		err := a.run(ctx, "b5_repairs", map[string]any{"page": page, "pageSize": pageSize, "where": where}, &out)
		return out.RepairPage, err
	}
	if format == "json" {
		// Call: one page of the list. Encode: the envelope around it.
		list, err := fetch(page, pageSize)
		if err != nil {
			return err
		}
		writeEnvelope(w, list)
		return nil
	}
	// CSV: the whole list, for a spreadsheet, read 100 rows at a time.
	var rows []repair
	for page := 1; ; page++ {
		list, err := fetch(page, 100)
		if err != nil {
			return err
		}
		if list.TotalRecords > maxCSVRepairs {
			return apperr.InvalidField("format", "%d repairs match, over the %d a CSV holds: narrow the list with city, propertyId or since, or page through it as JSON",
				list.TotalRecords, maxCSVRepairs)
		}
		rows = append(rows, list.Data...)
		if !list.HasNextPage {
			break
		}
	}
	writeRepairsCSV(w, rows)
	return nil
}

// csvHeader names the columns of the repair list's CSV.
var csvHeader = []string{"propertyId", "propertyCode", "address", "city", "inventoryId", "signatureDate",
	"environment", "level", "itemId", "item", "material", "rating", "description"}

// writeRepairsCSV writes RFC 4180 CSV (CRLF line ends) with a UTF-8 byte
// order mark, without which Excel reads "Habitación" as Latin-1.
func writeRepairsCSV(w http.ResponseWriter, rows []repair) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="repairs.csv"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("\uFEFF"))
	out := csv.NewWriter(w)
	out.UseCRLF = true
	_ = out.Write(csvHeader)
	for _, r := range rows {
		inv := r.Environment.Inventory
		signed := ""
		if inv.SignatureDate != nil {
			signed = *inv.SignatureDate
		}
		_ = out.Write([]string{inv.Property.PropertyID, asText(inv.Property.Code), asText(inv.Property.Address), asText(inv.Property.City),
			inv.InventoryID, signed, asText(r.Environment.Name), strconv.Itoa(r.Environment.Level),
			r.ItemID, asText(r.Name), asText(r.Material.Name), strconv.Itoa(r.Rating), asText(r.Description)})
	}
	out.Flush()
}

// asText keeps a text cell text in a spreadsheet: one that starts like a
// formula (=, +, -, @, or a tab or return before one) gets a leading
// apostrophe, so an inspector's comment such as "=HYPERLINK(...)" is shown,
// never run (OWASP's CSV injection advice).
func asText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
