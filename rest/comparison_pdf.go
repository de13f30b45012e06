package rest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/signedpdf"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// comparisonRecord is B4's PDF operation's answer.
type comparisonRecord struct {
	From, To     comparedSide
	Summary      report.Summary
	Environments []comparedRoom
}

// comparedSide is one of B4's PDF's inventories.
type comparedSide struct {
	ID                 string     `json:"id"`
	InventoryTypeName  string     `json:"inventoryTypeName"`
	CreatedAt          time.Time  `json:"createdAt"`
	SignatureDate      *time.Time `json:"signatureDate"`
	Deposit            *string    `json:"deposit"`
	Currency           string     `json:"currency"`
	RequiredSignatures []string   `json:"requiredSignatures"`
	Signatures         []struct {
		Party      string  `json:"party"`
		SignerName *string `json:"signerName"`
	} `json:"signatures"`
	Property struct {
		Code, Address, City string
	} `json:"property"`
}

// comparedRoom is one of B4's PDF's rooms.
type comparedRoom struct {
	Name     string
	Level    int
	Presence string
	Items    []struct {
		Name                           string
		Change                         string
		FromRating, ToRating           *int
		FromToRepair, ToToRepair       *bool
		FromDescription, ToDescription *string
		FromPhotos, ToPhotos           []struct {
			StorageReference string
			SHA256           *string `json:"sha256"`
		}
	}
}

// report is the comparison as the report shows it, with the photos'
// thumbnails.
func (c comparisonRecord) report(ctx context.Context, store *files.Store) (report.Comparison, error) {
	text := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	side := func(s comparedSide) report.Side {
		out := report.Side{ID: s.ID, TypeName: s.InventoryTypeName, CreatedAt: s.CreatedAt, Deposit: text(s.Deposit), Currency: s.Currency}
		if s.SignatureDate != nil {
			out.SignatureDate = *s.SignatureDate
		}
		for _, sig := range s.Signatures {
			out.Signers = append(out.Signers, report.Signer{Party: sig.Party, Name: text(sig.SignerName)})
		}
		return out
	}
	p := c.To.Property
	out := report.Comparison{
		Property: strings.TrimSpace(p.Code + " " + p.Address + ", " + p.City),
		From:     side(c.From),
		To:       side(c.To),
		Summary:  c.Summary,
		Required: c.To.RequiredSignatures,
	}
	flag := func(b *bool) bool { return b != nil && *b }
	for _, env := range c.Environments {
		room := report.ComparedRoom{Name: env.Name, Level: env.Level, Presence: env.Presence}
		for _, it := range env.Items {
			item := report.ComparedItem{Name: it.Name, Change: it.Change, FromRating: it.FromRating, ToRating: it.ToRating,
				FromToRepair: flag(it.FromToRepair), ToToRepair: flag(it.ToToRepair),
				FromDescription: text(it.FromDescription), ToDescription: text(it.ToDescription)}
			for _, ph := range it.FromPhotos {
				item.FromPhotos = append(item.FromPhotos, signedpdf.Photo(ph.StorageReference, ph.SHA256))
			}
			for _, ph := range it.ToPhotos {
				item.ToPhotos = append(item.ToPhotos, signedpdf.Photo(ph.StorageReference, ph.SHA256))
			}
			room.Items = append(room.Items, item)
		}
		out.Environments = append(out.Environments, room)
	}
	var photos []*report.Photo
	for _, room := range out.Environments {
		for _, it := range room.Items {
			for _, side := range [][]report.Photo{it.FromPhotos, it.ToPhotos} {
				for i := range side {
					photos = append(photos, &side[i])
				}
			}
		}
	}
	return out, signedpdf.Thumbnails(ctx, store, photos)
}

// B4's PDF GET {base_url}/inventories/comparison/pdf?from=&to=
func (a *API) inventoryComparisonPDF(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the two inventories and the company.
	from, to := p.uuid("from"), p.uuid("to")
	company := p.company()
	if p.err != nil {
		return p.err
	}
	// Call: the comparison, refused and scoped as B4's.
	ctx := tenant.WithCompany(r.Context(), company)
	var out struct {
		Company *struct {
			Name string `json:"name"`
		} `json:"company"`
		InventoryComparison comparisonRecord `json:"inventoryComparison"`
	}
	if err := a.run(ctx, "b4_inventory_comparison_pdf", map[string]any{"from": from.String(), "to": to.String()}, &out); err != nil {
		return err
	}
	// Encode: the report, rendered now (a comparison is not a signed
	// document: nothing is stored), as an attachment. Rendering is within
	// the request's deadline: past it, the error's status is written, never
	// a 200 with half a document.
	doc, err := out.InventoryComparison.report(ctx, a.files)
	if err != nil {
		return err
	}
	doc.Zone = a.zone
	if out.Company != nil {
		doc.CompanyName = out.Company.Name
	}
	data, err := report.RenderComparison(ctx, doc)
	if err != nil {
		return err
	}
	files.ServeRendered(w, r, fmt.Sprintf("comparacion-%s-%s.pdf", from.String()[:8], to.String()[:8]), data)
	return nil
}
