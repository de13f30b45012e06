package rest

import (
	"net/http"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
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

// A2 GET /inventory/download-pdf/{inventoryId}
func (a *API) inventoryPDF(w http.ResponseWriter, r *http.Request, p *params) error {
	// Parse: the inventory id, and the company if one is sent.
	id := p.uuid("inventoryId")
	ctx := byUUID(r, p, "A2", id)
	if p.err != nil {
		return p.err
	}
	// Call: the inventory, which must be signed; its PDF, when it was never
	// kept (a signature's rendering under way or failed, an import without
	// it), is made in the background and waited for within the deadline:
	// until it is ready, 503 with Retry-After. What was rendered is sent
	// whether or not the store kept it.
	n, err := node[signedPDF](ctx, a, "a2_inventory_pdf", id, "Inventory", "inventory")
	switch {
	case err != nil:
		return err
	case !n.IsSigned:
		return apperr.Errorf(apperr.Conflict, "inventory %s is not signed: it has no signed PDF yet", id)
	case n.PDFSha256 == nil:
		pdf, err := a.pdfs.Await(ctx, id)
		if err != nil {
			return err
		}
		files.ServeData(w, r, n.download(pdf.SHA256), pdf.Data)
		return nil
	}
	// Encode: the stored file, as an attachment.
	return a.files.Serve(w, r, n.download(*n.PDFSha256))
}

// download is the signed PDF of n, whose digest is sum, as A2 sends it.
func (n *signedPDF) download(sum string) files.Download {
	name := []string{"inventario", n.InventoryTypeName}
	if n.Property.Code != "" {
		name = append(name, n.Property.Code)
	}
	name = append(name, n.SignatureDate.UTC().Format("2006-01-02"))
	return files.Download{
		Key:      files.PDFKey(n.ID),
		SHA256:   sum,
		Filename: strings.Join(name, "-") + ".pdf",
		Modified: n.SignatureDate,
		// no-store: a signed contract with personal data, fetched by a URL
		// that needs no company; no browser or proxy should keep a copy.
		CacheControl: "no-store",
	}
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
	writeJSON(w, r, http.StatusOK, photos)
	return nil
}
