package signedpdf

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/company"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/signaturerequest"
	"github.com/propertyrecords/inventory/internal/drawing"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// Document reads inventory id's record (as ctx may see it) and returns it as
// the report shows it, with its photos' thumbnails (one that cannot be shown
// is listed, with why). The one place a record becomes a report: A2 renders
// a PDF never stored from it, and signInventory the PDF it stores.
func Document(ctx context.Context, client *ent.Client, store *files.Store, id uuid.UUID) (report.Inventory, error) {
	doc, _, err := document(ctx, client, store, id)
	return doc, err
}

// document is Document, with the record it was read from.
func document(ctx context.Context, client *ent.Client, store *files.Store, id uuid.UUID) (report.Inventory, *ent.Inventory, error) {
	inv, err := client.Inventory.Query().Where(inventory.ID(id)).WithProperty().
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.WithItems(func(q *ent.ItemQuery) { q.WithMaterial().WithPhotos() })
		}).Only(ctx)
	if err != nil {
		return report.Inventory{}, nil, err
	}
	doc := report.Inventory{
		ID: inv.ID.String(), TypeName: inv.InventoryType.Name(), RentalPrice: inv.RentalPrice.StringFixed(2),
		Deposit:  amount(inv.Deposit),
		Currency: inv.Currency, CreatedAt: inv.CreatedAt.UTC(), AgentSigned: utc(inv.AgentSignatureDate),
		OwnerSigned: utc(inv.OwnerSignatureDate), AgentName: text(inv.AgentSignerName), OwnerName: text(inv.OwnerSignerName),
		TenantSigned: utc(inv.TenantSignatureDate), TenantName: text(inv.TenantSignerName), Required: strings.Split(inv.RequiredSignatures, ","),
		SignatureDate: utc(inv.SignatureDate), ApprovalCode: text(inv.ApprovalCode), RemoteSigned: inv.IsRemoteSigned,
	}
	if doc.CompanyName, err = CompanyName(ctx, client, inv.CompanyID); err != nil {
		return report.Inventory{}, nil, err
	}
	if doc.Certificate, err = certificate(ctx, client, inv); err != nil {
		return report.Inventory{}, nil, err
	}
	doc.Drawings = drawings(inv)
	if p := inv.Edges.Property; p != nil {
		doc.PropertyCode, doc.PropertyType, doc.Address = p.Code, p.PropertyType, p.Address
		doc.Neighborhood, doc.City, doc.PropertyLevels = p.Neighborhood, p.City, p.Levels
	}
	for _, env := range inv.Edges.Environments {
		room := report.Environment{Name: env.Name, Level: env.Level, Description: env.Description}
		for _, it := range env.Edges.Items {
			item := report.Item{Name: it.Name, Rating: it.Rating, ToRepair: it.ToRepair, Description: it.Description}
			if it.Edges.Material != nil {
				item.Material = it.Edges.Material.Name
			}
			for _, p := range it.Edges.Photos {
				item.Photos = append(item.Photos, Photo(p.StorageReference, p.Sha256))
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
	return doc, inv, Thumbnails(ctx, store, photos)
}

// CompanyName is the name of company id as its reports print it: "" while
// it has none.
func CompanyName(ctx context.Context, client *ent.Client, id uuid.UUID) (string, error) {
	c, err := client.Company.Query().Where(company.ID(id)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return c.Name, nil
}

// amount is an optional amount as the report shows it: decimal text with
// two places, "" when absent.
func amount(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.StringFixed(2)
}

// drawings are the signatures inv's parties drew, by party. A drawing the
// record holds was read when it was written (records.Signing): one that no
// longer reads is left off the line rather than fail the document.
func drawings(inv *ent.Inventory) map[string]drawing.Drawing {
	out := map[string]drawing.Drawing{}
	for party, text := range map[string]*string{"AGENT": inv.AgentSignatureDrawing, "OWNER": inv.OwnerSignatureDrawing,
		"TENANT": inv.TenantSignatureDrawing} {
		if text == nil {
			continue
		}
		if d, err := drawing.Parse(*text); err == nil && !d.Empty() {
			out[party] = d
		}
	}
	return out
}

// certificate is each signature of inv as the PDF's last page states it,
// with the evidence a link's page kept (its request, used); none when an
// import brought every signature, so that such a record's PDF renders as it
// always did.
func certificate(ctx context.Context, client *ent.Client, inv *ent.Inventory) ([]report.Attestation, error) {
	signatures := records.Signatures(inv)
	recorded := false
	for _, s := range signatures {
		recorded = recorded || s.Method != records.Imported
	}
	if !recorded {
		return nil, nil
	}
	used, err := client.SignatureRequest.Query().
		Where(signaturerequest.InventoryID(inv.ID), signaturerequest.UsedAtNotNil()).All(ctx)
	if err != nil {
		return nil, err
	}
	var out []report.Attestation
	for _, s := range signatures {
		a := report.Attestation{Party: string(s.Party), Name: text(s.SignerName), Method: string(s.Method),
			Credential: text(s.CredentialName), At: s.SignedAt, Remote: s.Remote, Document: text(s.DocumentSHA256), Drawn: s.Drawn}
		if s.Method == records.ByLink {
			for _, r := range used {
				if string(r.Party) == string(s.Party) {
					a.Address, a.UserAgent, a.Consent = text(r.ClientAddress), text(r.UserAgent), text(r.ConsentVersion)
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Photo is a stored photo as a report lists it, before its thumbnail.
func Photo(reference string, digest *string) report.Photo {
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

// Thumbnails sets each photo's thumbnail, or why it has none, reading (or
// making) each distinct photo's once: the same file twice in a report, under
// one name or under two with one digest, is decoded at most once. It returns
// the first error that is not a photo's own (the store's, or ctx's when the
// request ends), and then no photo is to be drawn.
func Thumbnails(ctx context.Context, store *files.Store, photos []*report.Photo) error {
	if store == nil { // a service that keeps no files (tests of its records alone)
		for _, p := range photos {
			p.NotShown = "archivo no disponible"
		}
		return nil
	}
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
