package rest

import (
	"context"
	"encoding/csv"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/fairshare"
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

// maxCSVRepairs bounds a CSV export, checked against the list's count
// before anything is written: a longer list must be narrowed. The export is
// streamed, so memory does not bound it; time does: 50,000 rows (about 11
// MB) took 3.2 s alone on SQLite on 2 cores and 2.0 s on PostgreSQL, inside
// the 10 s deadline with room for others.
const maxCSVRepairs = 50_000

// csvPageSize is how many rows each page of a CSV export reads: the most a
// page of the repair list holds. Each page first finds every property's
// latest signed inventory, so fewer, larger pages cost less: 100 rows a page
// took six times as long on SQLite. A page's GraphQL answer (about 0.5 MB)
// is well under INVENTORY_MAX_RESPONSE_BYTES; one over it is read again in
// halves.
const csvPageSize = 1000

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
	if format == "csv" {
		return a.repairsCSV(ctx, w, where)
	}
	// Call: one page of the list. Encode: the envelope around it.
	var out struct {
		RepairPage repairList `json:"repairPage"`
	}
	if err := a.run(ctx, "b5_repairs", map[string]any{"page": page, "pageSize": pageSize, "where": where}, &out); err != nil {
		return err
	}
	writeEnvelope(w, r, out.RepairPage)
	return nil
}

// repairPage is a page of the repair list as the CSV export reads it.
type repairPage struct {
	TotalCount *int `json:"totalCount"` // the first page's only
	Edges      []struct {
		Cursor string `json:"cursor"`
		Node   repair `json:"node"`
	} `json:"edges"`
}

// repairsCSV streams the whole repair list as CSV: one count, then pages
// by keyset in the list's order (after the last row read), each written (and flushed) as it is read, so that the export holds
// one page in memory whatever its length, and its first rows reach the
// client while the later ones are read. Every page is a GraphQL operation
// on the executor /graphql serves, as every REST call is.
//
// Once the first page is written the status is sent, and a failure can no
// longer be told as an error: the answer is then cut (http.ErrAbortHandler),
// so that the client sees a broken download rather than a short list that
// looks whole.
func (a *API) repairsCSV(ctx context.Context, w http.ResponseWriter, where map[string]any) error {
	size := csvPageSize
	page, asked, err := a.repairCSVPage(ctx, where, nil, &size)
	if err != nil {
		return err
	}
	if page.TotalCount == nil {
		return errors.New("rest: the repair list's first page has no totalCount")
	}
	if total := *page.TotalCount; total > maxCSVRepairs {
		return apperr.InvalidField("format", "%d repairs match, over the %d a CSV holds: narrow the list with city, propertyId or since, or page through it as JSON",
			total, maxCSVRepairs)
	}
	// The export reads the database until its last row: it keeps its place
	// in the fair share, which an answer that has started gives back.
	fairshare.KeepPlace(ctx)
	out := newRepairsCSV(w)
	rows := 0
	for {
		for _, e := range page.Edges {
			out.row(e.Node)
		}
		rows += len(page.Edges)
		if err := out.flush(); err != nil {
			return nil // the client went away: nothing to tell it
		}
		if len(page.Edges) < asked {
			return nil // the last page
		}
		after := page.Edges[len(page.Edges)-1].Cursor
		if page, asked, err = a.repairCSVPage(ctx, where, &after, &size); err != nil {
			a.logCut(ctx, rows, err)
			panic(http.ErrAbortHandler)
		}
	}
}

// repairCSVPage reads the page of the repair list after the cursor (the
// first, with the list's count, when after is nil), of *size rows, and says
// how many it asked for. A page whose answer is over the answer's byte
// limit is read again at half the size, which then holds for the pages
// after it. A page refused by the company's cost budget is read again when
// the budget allows, if that is before the deadline: the export is already
// under way.
func (a *API) repairCSVPage(ctx context.Context, where map[string]any, after *string, size *int) (repairPage, int, error) {
	for {
		var out struct {
			Repairs repairPage `json:"repairs"`
		}
		vars := map[string]any{"first": *size, "where": where, "count": after == nil}
		if after != nil {
			vars["after"] = *after
		}
		err := a.run(ctx, "b5_repairs_csv", vars, &out)
		switch e, _ := apperr.Public(err); {
		case err == nil:
			return out.Repairs, *size, nil
		case e.Code == apperr.ResponseTooLarge && *size > 1:
			*size /= 2
		case e.Code == apperr.RateLimited && after != nil && e.RetryAfter > 0 && waitFor(ctx, e.RetryAfter):
		default:
			return repairPage{}, 0, err
		}
	}
}

// waitFor waits d, and reports whether ctx allows that much: false at once
// when its deadline comes sooner.
func waitFor(ctx context.Context, d time.Duration) bool {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// logCut says why an export was cut after rows rows. A deadline is the
// server's to log (a WARN line for every request past its deadline), a
// client gone is nobody's concern; an outage is a warning and anything else
// a bug.
func (a *API) logCut(ctx context.Context, rows int, err error) {
	public, internal := apperr.Public(err)
	switch {
	case ctx.Err() != nil:
		a.log.InfoContext(ctx, "rest: repair CSV cut: the request ended", "rows_written", rows, "err", err)
	case internal:
		a.log.ErrorContext(ctx, "rest: repair CSV cut: internal error", "rows_written", rows, "err", err)
	default:
		a.log.WarnContext(ctx, "rest: repair CSV cut", "rows_written", rows, "code", public.Code, "err", err)
	}
}

// csvHeader names the columns of the repair list's CSV.
var csvHeader = []string{"propertyId", "propertyCode", "address", "city", "inventoryId", "signatureDate",
	"environment", "level", "itemId", "item", "material", "rating", "description"}

// repairsCSV writes RFC 4180 CSV (CRLF line ends) with a UTF-8 byte order
// mark, without which Excel reads "Habitación" as Latin-1.
type repairsCSV struct {
	w     http.ResponseWriter
	out   *csv.Writer
	cells []string
}

func newRepairsCSV(w http.ResponseWriter) *repairsCSV {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="repairs.csv"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("\uFEFF"))
	c := &repairsCSV{w: w, out: csv.NewWriter(w), cells: make([]string, len(csvHeader))}
	c.out.UseCRLF = true
	_ = c.out.Write(csvHeader)
	return c
}

func (c *repairsCSV) row(r repair) {
	inv := r.Environment.Inventory
	signed := ""
	if inv.SignatureDate != nil {
		signed = *inv.SignatureDate
	}
	c.cells = append(c.cells[:0], inv.Property.PropertyID, asText(inv.Property.Code), asText(inv.Property.Address), asText(inv.Property.City),
		inv.InventoryID, signed, asText(r.Environment.Name), strconv.Itoa(r.Environment.Level),
		r.ItemID, asText(r.Name), asText(r.Material.Name), strconv.Itoa(r.Rating), asText(r.Description))
	_ = c.out.Write(c.cells)
}

// flush sends the rows written so far to the client.
func (c *repairsCSV) flush() error {
	c.out.Flush()
	if err := c.out.Error(); err != nil {
		return err
	}
	if err := http.NewResponseController(c.w).Flush(); !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
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
