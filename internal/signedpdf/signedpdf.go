// Package signedpdf keeps what section 3 of the spec promises: a signed
// inventory has a signed PDF. Most are stored when their records are loaded
// (generate --files, import with files); one that was not is rendered from
// its record when first asked for, stored, and its SHA-256 recorded, so that
// it is served like any other from then on. The report is deterministic from
// the record, so this is the document a load would have stored.
package signedpdf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Keeper renders and stores signed PDFs.
type Keeper struct {
	client *ent.Client
	files  *files.Store
	zone   *time.Location
}

// New returns a Keeper writing to client's database and the files store,
// whose PDFs show times in zone beside UTC (report.DefaultTimeZone when nil).
func New(client *ent.Client, fs *files.Store, zone *time.Location) *Keeper {
	return &Keeper{client: client, files: fs, zone: zone}
}

// companyOf is the company of inventory id, whose fair share its rendering
// takes.
func (k *Keeper) companyOf(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	inv, err := k.client.Inventory.Query().Where(inventory.ID(id)).Only(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	return inv.CompanyID, nil
}

// Rendered is a signed PDF rendered from its record.
type Rendered struct {
	Data   []byte
	SHA256 string
}

// Provide renders the signed inventory id from its record (Document, as ctx
// may read it), stores it as its PDF and records its digest (why names the
// writer in the audit of that write), and returns the document whether or
// not it was kept: notKept says why it was not (a store that refuses
// writes, a database that cannot record its digest), err why there is no
// document; Renderings serves what was rendered meanwhile and tries again.
// The digest is recorded once: only where none is. The file is whole or
// absent: the store writes a temporary file and renames it (an object
// store's put is whole).
func (k *Keeper) Provide(ctx context.Context, id uuid.UUID, why string) (pdf Rendered, notKept, err error) {
	pdf, _, _, err = k.render(ctx, id)
	if err != nil {
		return Rendered{}, nil, err
	}
	return pdf, k.keep(ctx, id, pdf, why), nil
}

// Draft renders inventory id's PDF as it stands (as ctx may read it), for
// a party to sign (records.Drafts): the same rendering as the signed PDF's,
// so the document signed is the one a dispute reads, with the signatures
// made so far.
func (k *Keeper) Draft(ctx context.Context, id uuid.UUID) (*records.Draft, error) {
	pdf, doc, inv, err := k.render(ctx, id)
	if err != nil {
		return nil, err
	}
	return &records.Draft{Version: inv.Version, SHA256: pdf.SHA256, PDF: pdf.Data, Document: doc}, nil
}

// render is inventory id's PDF as it stands, what it shows, and the record
// it was read from: the one rendering of the signed PDF and of drafts.
func (k *Keeper) render(ctx context.Context, id uuid.UUID) (Rendered, report.Inventory, *ent.Inventory, error) {
	doc, inv, err := document(ctx, k.client, k.files, id)
	if err != nil {
		return Rendered{}, report.Inventory{}, nil, err
	}
	doc.Zone = k.zone
	data, err := report.Render(ctx, doc)
	if err != nil {
		return Rendered{}, report.Inventory{}, nil, fmt.Errorf("signedpdf: rendering inventory %s: %w", id, err)
	}
	sum := sha256.Sum256(data)
	return Rendered{Data: data, SHA256: hex.EncodeToString(sum[:])}, doc, inv, nil
}

// keep stores pdf as inventory id's PDF and records its digest.
func (k *Keeper) keep(ctx context.Context, id uuid.UUID, pdf Rendered, why string) error {
	if _, err := k.files.Put(ctx, files.PDFKey(id.String()), pdf.Data); err != nil {
		return err
	}
	// Limited to the digest of a signed inventory that has none (the
	// freeze hooks let that through once), and audited.
	write := tenant.UnrestrictedRecord(ctx, why, id)
	if err := k.recordDigest(write, id, pdf.SHA256); err != nil {
		return fmt.Errorf("signedpdf: recording the digest of inventory %s: %w", id, err)
	}
	return nil
}

// recordDigest records sum as the PDF's digest, and the event that the PDF
// is ready, in one transaction; a digest recorded already is left, and so
// is its event.
func (k *Keeper) recordDigest(ctx context.Context, id uuid.UUID, sum string) error {
	return records.InTx(ctx, k.client, func(tx *ent.Tx) error {
		n, err := tx.Inventory.Update().
			Where(inventory.ID(id), inventory.IsSigned(true), inventory.PdfSha256IsNil()).
			SetPdfSha256(sum).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		inv, err := tx.Inventory.Get(ctx, id)
		if err != nil {
			return err
		}
		return records.Record(ctx, tx.Client(), records.Event{Kind: recordevent.KindPdfStored,
			CompanyID: inv.CompanyID, PropertyID: inv.PropertyID, InventoryID: id, Version: inv.Version})
	})
}

// stored is inventory id's signed PDF as kept, and whether it is.
func (k *Keeper) stored(ctx context.Context, id uuid.UUID) (Rendered, bool, error) {
	inv, err := k.client.Inventory.Query().Where(inventory.ID(id)).Select(inventory.FieldPdfSha256).Only(ctx)
	if err != nil || inv.PdfSha256 == nil {
		return Rendered{}, false, err
	}
	data, err := k.files.Get(ctx, files.PDFKey(id.String()))
	if err != nil {
		return Rendered{}, false, err
	}
	return Rendered{Data: data, SHA256: *inv.PdfSha256}, true, nil
}

// kept reports whether inventory id's signed PDF is kept: its digest is
// recorded only once its file is stored.
func (k *Keeper) kept(ctx context.Context, id uuid.UUID) (bool, error) {
	return k.client.Inventory.Query().Where(inventory.ID(id), inventory.PdfSha256NotNil()).Exist(ctx)
}
