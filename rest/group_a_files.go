package rest

import (
	"context"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// signedPDF is what serving an inventory's signed PDF needs.
type signedPDF struct {
	ID                string    `json:"id"`
	IsSigned          bool      `json:"isSigned"`
	PDFSha256         *string   `json:"pdfSha256"`
	SignatureDate     time.Time `json:"signatureDate"`
	InventoryTypeName string    `json:"inventoryTypeName"`
	Property          struct {
		Code string `json:"code"`
	} `json:"property"`
}

// reportRecord is what a signed PDF is rendered from, as A2's report
// operation reads it.
type reportRecord struct {
	ID                 string    `json:"id"`
	InventoryTypeName  string    `json:"inventoryTypeName"`
	RentalPrice        string    `json:"rentalPrice"`
	Currency           string    `json:"currency"`
	CreatedAt          time.Time `json:"createdAt"`
	AgentSignatureDate time.Time `json:"agentSignatureDate"`
	OwnerSignatureDate time.Time `json:"ownerSignatureDate"`
	SignatureDate      time.Time `json:"signatureDate"`
	ApprovalCode       string    `json:"approvalCode"`
	IsRemoteSigned     bool      `json:"isRemoteSigned"`
	Property           struct {
		Code         string `json:"code"`
		PropertyType string `json:"propertyType"`
		Address      string `json:"address"`
		Neighborhood string `json:"neighborhood"`
		City         string `json:"city"`
		Levels       int    `json:"levels"`
	} `json:"property"`
	Environments []struct {
		Name        string `json:"name"`
		Level       int    `json:"level"`
		Description string `json:"description"`
		Items       []struct {
			Name     string `json:"name"`
			Material struct {
				Name string `json:"name"`
			} `json:"material"`
			Rating      int    `json:"rating"`
			ToRepair    bool   `json:"toRepair"`
			Description string `json:"description"`
			Photos      []struct {
				StorageReference string  `json:"storageReference"`
				SHA256           *string `json:"sha256"`
			} `json:"photos"`
		} `json:"items"`
	} `json:"environments"`
}

// report is the record as the report shows it, with its photos'
// thumbnails (one that cannot be shown is listed, with why).
func (r reportRecord) report(ctx context.Context, store *files.Store) (report.Inventory, error) {
	doc := report.Inventory{
		ID: r.ID, TypeName: r.InventoryTypeName, RentalPrice: r.RentalPrice, Currency: r.Currency,
		CreatedAt: r.CreatedAt, AgentSigned: r.AgentSignatureDate, OwnerSigned: r.OwnerSignatureDate,
		SignatureDate: r.SignatureDate, ApprovalCode: r.ApprovalCode, RemoteSigned: r.IsRemoteSigned,
		PropertyCode: r.Property.Code, PropertyType: r.Property.PropertyType, Address: r.Property.Address,
		Neighborhood: r.Property.Neighborhood, City: r.Property.City, PropertyLevels: r.Property.Levels,
	}
	for _, env := range r.Environments {
		room := report.Environment{Name: env.Name, Level: env.Level, Description: env.Description}
		for _, it := range env.Items {
			item := report.Item{Name: it.Name, Material: it.Material.Name,
				Rating: it.Rating, ToRepair: it.ToRepair, Description: it.Description}
			for _, p := range it.Photos {
				item.Photos = append(item.Photos, reportPhoto(p.StorageReference, p.SHA256))
			}
			room.Items = append(room.Items, item)
		}
		doc.Environments = append(doc.Environments, room)
	}
	var photos []*report.Photo
	for _, env := range doc.Environments {
		for _, it := range env.Items {
			for i := range it.Photos {
				photos = append(photos, &it.Photos[i])
			}
		}
	}
	return doc, withThumbnails(ctx, store, photos)
}

// A2 GET /inventory/download-pdf/{inventoryId}
func (a *API) inventoryPDF(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the inventory id, and the company if one is sent.
	id := p.uuid("inventoryId")
	ctx := byUUID(r, p, "A2", id)
	if p.err != nil {
		return p.err
	}
	// Call: the inventory, which must be signed; its PDF is rendered from
	// the record if it was never stored (a signed inventory has one).
	n, err := node[signedPDF](ctx, a, "a2_inventory_pdf", id, "Inventory", "inventory")
	switch {
	case err != nil:
		return err
	case !n.IsSigned:
		return apperr.Errorf(apperr.Conflict, "inventory %s is not signed: it has no signed PDF yet", id)
	case n.PDFSha256 == nil:
		record, err := node[reportRecord](ctx, a, "a2_inventory_report", id, "Inventory", "inventory")
		if err != nil {
			return err
		}
		doc, err := record.report(ctx, a.files)
		if err != nil {
			return err
		}
		sum, err := a.pdfs.Store(ctx, doc)
		if err != nil {
			return err
		}
		n.PDFSha256 = &sum
	}
	// Encode: the stored file, as an attachment.
	name := []string{"inventario", n.InventoryTypeName}
	if n.Property.Code != "" {
		name = append(name, n.Property.Code)
	}
	name = append(name, n.SignatureDate.UTC().Format("2006-01-02"))
	return a.files.Serve(w, r, files.Download{
		Key:      files.PDFKey(n.ID),
		SHA256:   *n.PDFSha256,
		Filename: strings.Join(name, "-") + ".pdf",
		Modified: n.SignatureDate,
		// no-store: a signed contract with personal data, fetched by a URL
		// that needs no company; no browser or proxy should keep a copy.
		CacheControl: "no-store",
	})
}

// itemPhotos is A3's body: the item and its photos.
type itemPhotos struct {
	ItemDiagnosticID string `json:"ItemDiagnosticId"`
	Photos           list[struct {
		StorageReference string  `json:"StorageReference"`
		ContentType      string  `json:"ContentType"`
		Sha256           *string `json:"Sha256"`
		URL              string  `json:"Url"`
	}] `json:"Photos"`
}

// A3 GET /inventory/download-photos/itemDiagnostic/{id}
func (a *API) itemPhotos(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the item id, and the company if one is sent.
	id := p.uuid("id")
	ctx := byUUID(r, p, "A3", id)
	if p.err != nil {
		return p.err
	}
	// Call: the node, which must be an item.
	photos, err := node[itemPhotos](ctx, a, "a3_item_photos", id, "Item", "item diagnostic")
	if err != nil {
		return err
	}
	// Encode: the photos with their download URLs.
	writeJSON(w, http.StatusOK, photos)
	return nil
}

// reportPhoto is a stored photo as a report lists it, before its thumbnail.
func reportPhoto(reference string, digest *string) report.Photo {
	p := report.Photo{Reference: reference}
	if digest != nil {
		p.SHA256 = *digest
	}
	return p
}

// thumbnailReads bounds the thumbnails one report reads at once: a cloud
// store answers each read in tens of milliseconds, so the hundreds of a
// large report read one by one would take seconds; making a missing one is
// bounded by internal/thumbnail's decode budget, not by this.
const thumbnailReads = 8

// withThumbnails sets each photo's thumbnail, or why it has none, reading
// (or making) each distinct photo's once: the same file twice in a report,
// under one name or under two with one digest, is decoded at most once.
// It returns the first error that is not a photo's own (the store's, or
// ctx's when the request ends), and then no photo is to be drawn.
func withThumbnails(ctx context.Context, store *files.Store, photos []*report.Photo) error {
	type result struct {
		thumb    []byte
		notShown string
	}
	results := map[string]*result{}
	same := func(p *report.Photo) string {
		if p.SHA256 != "" {
			return "sha256:" + p.SHA256
		}
		return "reference:" + p.Reference
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(thumbnailReads)
	for _, p := range photos {
		if results[same(p)] != nil {
			continue
		}
		res := &result{}
		results[same(p)] = res
		reference, digest := p.Reference, p.SHA256
		g.Go(func() error {
			thumb, err := thumbnail.For(gctx, store, reference, digest)
			if reason, ok := thumbnail.IsNotShown(err); ok {
				res.notShown = reason
				return nil
			}
			res.thumb = thumb
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, p := range photos {
		res := results[same(p)]
		p.Thumbnail, p.NotShown = res.thumb, res.notShown
	}
	return nil
}
