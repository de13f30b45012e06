package transfer

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
)

// fieldError is a rejected field and why.
type fieldError struct{ field, reason string }

func (e *fieldError) Error() string { return e.field + ": " + e.reason }

func reject(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, reason: fmt.Sprintf(format, args...)}
}

// fromRule is the rejection of a record's rule (internal/records).
func fromRule(err *apperr.Error) *fieldError {
	return &fieldError{field: err.Field, reason: err.Message}
}

// names are the record's field names, for the paths of records' rules.
var names = &records.Names{
	ID: "InventoryId", PropertyID: "Property.PropertyId", Type: "InventoryType", RentalPrice: "RentalPrice", Deposit: "Deposit", Currency: "Currency",
	RequiredSignatures: "RequiredSignatures",
	Signed:             "IsSigned", RemoteSigned: "IsRemoteSigned", ApprovalCode: "Approval_Code", SignatureDate: "SignatureDate", PDF: "PdfSha256",
	Environments: "EnvironmentDiagnostics", EnvironmentID: "EnvironmentId", EnvironmentName: "EnvironmentName",
	EnvironmentDescription: "Description", Level: "Level", EnvironmentOrder: "Order",
	Items: "ItemDiagnostic", ItemID: "ItemDiagnosticId", ItemName: "ItemName", ItemDescription: "Description",
	Rating: "Rating", ItemOrder: "Order", MaterialName: "Material.MaterialName",
	Photos: "Photo", PhotoID: "PhotoId", StorageReference: "StorageReference", PhotoSHA256: "Sha256",
	PropertyCode: "Property.Code", PropertyAddress: "Property.Address", PropertyNeighborhood: "Property.Neighborhood",
	PropertyCity: "Property.City", PropertyType: "Property.PropertyType", PropertyDetail: "Property.Detail",
	PropertyLevels: "Property.Levels",
}

// plan is a validated record: its tree and property as internal/records
// has them, every id known.
type plan struct {
	rec  *Record
	line int
	tree records.Inventory
	prop records.Property
	pdf  []byte // the PdfFile's bytes, once read
	// photoFiles are the File bytes of photos, by their place in the record.
	photoFiles map[[3]int][]byte
	refs       map[string]string // storage reference: its field

	// Found by checkExisting:
	propertyExists, inventoryExists bool
	// propertyUnchanged, unchanged: the property, the inventory is stored
	// as the line states it, so nothing of it is written; correcting: the
	// inventory is signed, the line changes it, and the import was told to
	// (--correct-signed).
	propertyUnchanged, unchanged, correcting bool
}

// checker collects the first problem of a record's parsing; later ones are
// skipped.
type checker struct{ err *fieldError }

func (c *checker) ok() bool { return c.err == nil }

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = reject(field, format, args...)
	}
}

func (c *checker) uuid(field, s string) uuid.UUID {
	if !c.ok() {
		return uuid.Nil
	}
	if s == "" {
		c.fail(field, "missing: a UUID is required")
		return uuid.Nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		c.fail(field, "%s is not a UUID", apperr.Quote(s))
	}
	return id
}

// childID is the id given, or nil for records to derive one from the parent
// and position, so that re-importing a record without child ids updates
// instead of duplicating.
func (c *checker) childID(field, s string) uuid.UUID {
	if s == "" {
		return uuid.Nil
	}
	return c.uuid(field, s)
}

func (c *checker) time(field, s string) time.Time {
	if !c.ok() {
		return time.Time{}
	}
	if s == "" {
		c.fail(field, "missing: an RFC 3339 timestamp is required")
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.fail(field, "%s is not an RFC 3339 timestamp", apperr.Quote(s))
	}
	return t.UTC()
}

func (c *checker) optionalTime(field string, s *string) *time.Time {
	if s == nil {
		return nil
	}
	t := c.time(field, *s)
	return &t
}

func (c *checker) price(field, s string) decimal.Decimal {
	if !c.ok() {
		return decimal.Decimal{}
	}
	if s == "" {
		c.fail(field, "missing: decimal text such as \"1500000.00\" is required")
		return decimal.Decimal{}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		c.fail(field, "%s is not decimal text", apperr.Quote(s))
	}
	return d
}

// check parses rec into the tree and property of internal/records, and
// checks them against its rules: the one validation path of every writer.
func check(rec *Record) (*plan, *fieldError) {
	c := &checker{}
	p := &plan{rec: rec}
	t := &p.tree
	t.CompanyID = c.uuid("CompanyId", rec.CompanyID)
	t.ID = c.uuid("InventoryId", rec.InventoryID)
	if c.ok() && rec.InventoryType == nil {
		c.fail("InventoryType", "missing: a code from 0 to 3 is required")
	}
	if c.ok() {
		t.Type = inventorytype.Type(*rec.InventoryType)
	}
	t.RentalPrice = c.price("RentalPrice", rec.RentalPrice)
	if rec.Deposit != nil {
		d := c.price("Deposit", *rec.Deposit)
		t.Deposit = &d
	}
	if c.ok() && rec.CompanyName != "" {
		if err := records.ValidateCompanyName("CompanyName", rec.CompanyName); err != nil {
			return p, fromRule(err)
		}
	}
	if rec.Currency == "" {
		rec.Currency = "COP"
	}
	t.Currency = rec.Currency
	t.CreatedAt = c.time("CreationDate", rec.CreationDate)
	t.Signature = records.Signature{Signed: rec.IsSigned, Remote: rec.IsRemoteSigned, ApprovalCode: rec.ApprovalCode,
		Date:   c.optionalTime("SignatureDate", rec.SignatureDate),
		Agent:  c.optionalTime("AgentSignatureDate", rec.AgentSignatureDate),
		Owner:  c.optionalTime("OwnerSignatureDate", rec.OwnerSignatureDate),
		Tenant: c.optionalTime("TenantSignatureDate", rec.TenantSignatureDate), PDFSha256: rec.PdfSha256}
	for _, p := range rec.RequiredSignatures {
		t.RequiredSignatures = append(t.RequiredSignatures, records.Party(p))
	}
	c.property(p)
	c.tree(p)
	if !c.ok() {
		return p, c.err
	}
	if err := records.ValidateProperty(&p.prop, names); err != nil {
		return p, fromRule(err)
	}
	if err := records.Validate(t, p.prop.Levels, names); err != nil {
		return p, fromRule(err)
	}
	if rec.PdfFile != "" && !rec.IsSigned {
		return p, reject("PdfFile", "an unsigned inventory has no signed PDF")
	}
	p.refs = map[string]string{}
	for i, env := range t.Environments {
		for j, it := range env.Items {
			for k, ph := range it.Photos {
				p.refs[ph.StorageReference] = fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo[%d].StorageReference", i, j, k)
			}
		}
	}
	return p, nil
}

func (c *checker) property(p *plan) {
	if !c.ok() {
		return
	}
	prop := p.rec.Property
	if prop == nil {
		c.fail("Property", "missing: the inventory's property is required")
		return
	}
	p.prop = records.Property{ID: c.uuid("Property.PropertyId", prop.PropertyID), CompanyID: p.tree.CompanyID,
		Code: prop.Code, Address: prop.Address, Neighborhood: prop.Neighborhood, City: prop.City,
		PropertyType: prop.PropertyType, IsActive: prop.IsActive == nil || *prop.IsActive, Detail: prop.Detail,
		Levels: 1, CreatedAt: p.tree.CreatedAt}
	if prop.Levels != nil {
		p.prop.Levels = *prop.Levels
	}
	if prop.CreationDate != "" {
		p.prop.CreatedAt = c.time("Property.CreationDate", prop.CreationDate)
	}
	p.tree.PropertyID = p.prop.ID
}

// tree parses the environments, items and photos: their ids, and the
// defaults of what a line may leave out (level 1, the environment's
// position as its order).
func (c *checker) tree(p *plan) {
	for i, env := range p.rec.EnvironmentDiagnostics {
		if !c.ok() {
			return
		}
		at := fmt.Sprintf("EnvironmentDiagnostics[%d]", i)
		e := records.Environment{ID: c.childID(at+".EnvironmentId", env.EnvironmentID), Name: env.EnvironmentName,
			Description: env.Description, Level: 1, Order: i}
		if env.Level != nil {
			e.Level = *env.Level
		}
		if env.Order != nil {
			e.Order = *env.Order
		}
		for j, it := range env.ItemDiagnostic {
			at := fmt.Sprintf("%s.ItemDiagnostic[%d]", at, j)
			item := records.Item{ID: c.childID(at+".ItemDiagnosticId", it.ItemDiagnosticID), Name: it.ItemName,
				Description: it.Description, Order: it.Order, ToRepair: it.ToRepair}
			if c.ok() && it.Rating == nil {
				c.fail(at+".Rating", "missing: an integer rating is required")
			}
			if c.ok() {
				item.Rating = *it.Rating
			}
			if it.Material != nil {
				item.MaterialName = it.Material.MaterialName
			}
			for k, ph := range it.Photo {
				item.Photos = append(item.Photos, records.Photo{ID: c.childID(fmt.Sprintf("%s.Photo[%d].PhotoId", at, k), ph.PhotoID),
					StorageReference: ph.StorageReference, SHA256: ph.Sha256})
			}
			e.Items = append(e.Items, item)
		}
		p.tree.Environments = append(p.tree.Environments, e)
	}
}
