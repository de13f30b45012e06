package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/scalar"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// exportPage is how many inventories are loaded, with their trees, at once:
// memory stays bounded whatever the company's size.
const exportPage = 200

// Exporter writes one company's inventories in the import format.
type Exporter struct {
	Client *ent.Client
	// Files and FilesDir, when both set, copy each stored PDF and photo into
	// FilesDir and name them in PdfFile and File; a file missing from the
	// store is left out.
	Files    *files.Store
	FilesDir string
}

// Export writes the company's inventories, oldest first, and returns how
// many it wrote. It reads through the company's tenancy scope, like any
// client of the API.
func (ex *Exporter) Export(ctx context.Context, company uuid.UUID, w io.Writer) (int, error) {
	ctx = tenant.WithCompany(ctx, company)
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	// Every line names the company, where it has a name, so that any
	// part of the file imported elsewhere brings it.
	var name string
	switch own, err := records.OwnCompany(ctx, ex.Client); {
	case err != nil:
		return 0, err
	case own != nil:
		name = own.Name
	}
	var after *ent.Inventory
	n := 0
	for {
		q := ex.Client.Inventory.Query().
			Order(inventory.ByCreatedAt(), inventory.ByID()).
			Limit(exportPage).
			WithProperty().
			WithEnvironments(func(q *ent.EnvironmentQuery) {
				q.WithItems(func(q *ent.ItemQuery) { q.WithMaterial().WithPhotos() })
			})
		if after != nil {
			q.Where(func(s *sql.Selector) {
				s.Where(sql.Or(
					sql.GT(s.C(inventory.FieldCreatedAt), after.CreatedAt),
					sql.And(sql.EQ(s.C(inventory.FieldCreatedAt), after.CreatedAt), sql.GT(s.C(inventory.FieldID), after.ID)),
				))
			})
		}
		page, err := q.All(ctx)
		if err != nil {
			return n, err
		}
		for _, inv := range page {
			rec, err := ex.record(ctx, inv, name)
			if err != nil {
				return n, err
			}
			if err := enc.Encode(rec); err != nil {
				return n, err
			}
			n++
		}
		if len(page) < exportPage {
			return n, out.Flush()
		}
		after = page[len(page)-1]
	}
}

func (ex *Exporter) record(ctx context.Context, inv *ent.Inventory, companyName string) (*Record, error) {
	kind := inv.InventoryType.Code()
	prop := inv.Edges.Property
	levels := prop.Levels
	active := prop.IsActive
	rec := &Record{
		CompanyID:           inv.CompanyID.String(), // the stored row's, not the one asked for
		InventoryID:         inv.ID.String(),
		InventoryType:       &kind,
		CompanyName:         companyName,
		RentalPrice:         inv.RentalPrice.StringFixed(2),
		Deposit:             fixed(inv.Deposit),
		Currency:            inv.Currency,
		IsSigned:            inv.IsSigned,
		IsRemoteSigned:      inv.IsRemoteSigned,
		ApprovalCode:        inv.ApprovalCode,
		CreationDate:        scalar.FormatTime(inv.CreatedAt),
		SignatureDate:       formatOptional(inv.SignatureDate),
		AgentSignatureDate:  formatOptional(inv.AgentSignatureDate),
		OwnerSignatureDate:  formatOptional(inv.OwnerSignatureDate),
		TenantSignatureDate: formatOptional(inv.TenantSignatureDate),
		PdfSha256:           inv.PdfSha256,
		Property: &Property{
			PropertyID: prop.ID.String(), Code: prop.Code, Address: prop.Address, Neighborhood: prop.Neighborhood,
			City: prop.City, PropertyType: prop.PropertyType, IsActive: &active, Detail: prop.Detail,
			Levels: &levels, CreationDate: scalar.FormatTime(prop.CreatedAt),
		},
		EnvironmentDiagnostics: []Environment{},
	}
	if inv.RequiredSignatures != schema.DefaultRequiredSignatures {
		rec.RequiredSignatures = strings.Split(inv.RequiredSignatures, ",")
	}
	if inv.PdfSha256 != nil {
		name := filepath.ToSlash(filepath.Join("pdf", inv.ID.String()+".pdf"))
		copied, err := ex.copyFile(ctx, files.PDFKey(inv.ID.String()), name)
		if err != nil {
			return nil, err
		}
		if copied {
			rec.PdfFile = name
		}
	}
	for _, env := range inv.Edges.Environments {
		level, order := env.Level, env.Order
		e := Environment{EnvironmentID: env.ID.String(), EnvironmentName: env.Name, Description: env.Description,
			Level: &level, Order: &order, ItemDiagnostic: []Item{}}
		for _, it := range env.Edges.Items {
			rating := it.Rating
			item := Item{ItemDiagnosticID: it.ID.String(), ItemName: it.Name, Description: it.Description,
				Rating: &rating, Order: it.Order, ToRepair: it.ToRepair,
				Material: &Material{MaterialName: it.Edges.Material.Name}, Photo: []Photo{}}
			for _, ph := range it.Edges.Photos {
				photo := Photo{PhotoID: ph.ID.String(), StorageReference: ph.StorageReference, Sha256: ph.Sha256}
				key, err := files.PhotoKey(ph.StorageReference)
				if err != nil {
					return nil, err
				}
				name := "photos/" + ph.StorageReference
				copied, err := ex.copyFile(ctx, key, name)
				if err != nil {
					return nil, err
				}
				if copied {
					photo.File = name
				}
				item.Photo = append(item.Photo, photo)
			}
			e.ItemDiagnostic = append(e.ItemDiagnostic, item)
		}
		rec.EnvironmentDiagnostics = append(rec.EnvironmentDiagnostics, e)
	}
	return rec, nil
}

// copyFile copies a stored file to name under FilesDir; it reports false
// when files are not exported or the store lacks the file.
func (ex *Exporter) copyFile(ctx context.Context, key, name string) (bool, error) {
	if ex.Files == nil || ex.FilesDir == "" {
		return false, nil
	}
	data, err := ex.Files.Get(ctx, key)
	if apperr.CodeOf(err) == apperr.NotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	path := filepath.Join(ex.FilesDir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, data, 0o644)
}

func formatOptional(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := scalar.FormatTime(*t)
	return &s
}

// fixed is an optional amount as the file writes it: two decimal places.
func fixed(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	s := d.StringFixed(2)
	return &s
}
