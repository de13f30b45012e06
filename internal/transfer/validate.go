package transfer

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// fieldError is a rejected field and why.
type fieldError struct{ field, reason string }

func (e *fieldError) Error() string { return e.field + ": " + e.reason }

func reject(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, reason: fmt.Sprintf(format, args...)}
}

// maxPrice bounds rental prices as the database does (numeric(15,2)).
var maxPrice = decimal.New(1, 13)

// plan is a validated record, with its values parsed and every id known.
type plan struct {
	rec                           *Record
	company, inventory, property  uuid.UUID
	kind                          inventorytype.Type
	price                         decimal.Decimal
	created, propertyCreated      time.Time
	signed, agentSigned, ownerSig *time.Time
	levels                        int
	envs                          []envPlan
	pdf                           []byte            // the PdfFile's bytes, once read
	refs                          map[string]string // storage reference: its field

	propertyExists, inventoryExists bool // found by checkOwnership
}

type envPlan struct {
	id           uuid.UUID
	level, order int
	items        []itemPlan
}

type itemPlan struct {
	id     uuid.UUID
	photos []photoPlan
}

type photoPlan struct {
	id   uuid.UUID
	data []byte // the File's bytes, once read
}

// checker collects the first problem of a record; later checks are skipped.
type checker struct{ err *fieldError }

func (c *checker) ok() bool { return c.err == nil }

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = reject(field, format, args...)
	}
}

// valid runs an ent schema validator, so that import refuses what the schema
// refuses, with the record's own field name.
func valid[T any](c *checker, field string, v T, validator func(T) error) {
	if c.ok() && validator != nil {
		if err := validator(v); err != nil {
			c.fail(field, "%v is refused: %v", v, err)
		}
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
		c.fail(field, "%q is not a UUID", s)
	}
	return id
}

// childID is the id given, or one derived from the parent and position, so
// that re-importing a record without child ids updates instead of duplicating.
func (c *checker) childID(field, s string, parent uuid.UUID, kind string, n int) uuid.UUID {
	if s == "" {
		return uuid.NewSHA1(parent, fmt.Appendf(nil, "%s/%d", kind, n))
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
		c.fail(field, "%q is not an RFC 3339 timestamp", s)
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

func (c *checker) text(field, s string) {
	if c.ok() && s == "" {
		c.fail(field, "missing: a non-empty string is required")
	}
}

// check validates rec and returns its plan, or the first problem found.
func check(rec *Record) (*plan, *fieldError) {
	c := &checker{}
	p := &plan{rec: rec}
	if field := nulField(reflect.ValueOf(rec), ""); field != "" {
		c.fail(field, "contains a NUL character (\\u0000): text may not, since PostgreSQL cannot store it")
	}
	p.company = c.uuid("CompanyId", rec.CompanyID)
	p.inventory = c.uuid("InventoryId", rec.InventoryID)
	switch {
	case !c.ok():
	case rec.InventoryType == nil:
		c.fail("InventoryType", "missing: a code from 0 to 3 is required")
	case inventorytype.Validate(*rec.InventoryType) != nil:
		c.fail("InventoryType", "%d is not a code from 0 to 3", *rec.InventoryType)
	default:
		p.kind = inventorytype.Type(*rec.InventoryType)
	}
	p.price = c.price(rec.RentalPrice)
	if rec.Currency == "" {
		rec.Currency = "COP"
	}
	valid(c, "Currency", rec.Currency, inventory.CurrencyValidator)
	p.created = c.time("CreationDate", rec.CreationDate)
	p.signed = c.optionalTime("SignatureDate", rec.SignatureDate)
	p.agentSigned = c.optionalTime("AgentSignatureDate", rec.AgentSignatureDate)
	p.ownerSig = c.optionalTime("OwnerSignatureDate", rec.OwnerSignatureDate)
	c.signatures(rec)
	if rec.PdfSha256 != nil {
		valid(c, "PdfSha256", *rec.PdfSha256, inventory.PdfSha256Validator)
	}
	if c.ok() && rec.PdfFile != "" && !rec.IsSigned {
		c.fail("PdfFile", "an unsigned inventory has no signed PDF")
	}
	c.property(p)
	c.treeSize(rec)
	c.environments(p)
	return p, c.err
}

// treeSize refuses an inventory larger than GraphQL reads whole: the bounds
// of its lists (the ListSize annotations of ent/schema), each of which is also
// the default size of its list, so that a report is never cut short.
func (c *checker) treeSize(rec *Record) {
	envs := rec.EnvironmentDiagnostics
	if c.ok() && len(envs) > ent.InventoryEnvironmentsMax {
		c.fail("EnvironmentDiagnostics", "%d environments: an inventory holds at most %d", len(envs), ent.InventoryEnvironmentsMax)
	}
	items, photos := 0, 0
	for i, env := range envs {
		if c.ok() && len(env.ItemDiagnostic) > ent.EnvironmentItemsMax {
			c.fail(fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic", i), "%d items: an environment holds at most %d",
				len(env.ItemDiagnostic), ent.EnvironmentItemsMax)
		}
		items += len(env.ItemDiagnostic)
		for j, it := range env.ItemDiagnostic {
			if c.ok() && len(it.Photo) > ent.ItemPhotosMax {
				c.fail(fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo", i, j), "%d photos: an item has at most %d",
					len(it.Photo), ent.ItemPhotosMax)
			}
			photos += len(it.Photo)
		}
	}
	if c.ok() && items > ent.EnvironmentItemsPerInventory {
		c.fail("EnvironmentDiagnostics", "%d items in all: an inventory holds at most %d", items, ent.EnvironmentItemsPerInventory)
	}
	if c.ok() && photos > ent.ItemPhotosPerInventory {
		c.fail("EnvironmentDiagnostics", "%d photos in all: an inventory holds at most %d", photos, ent.ItemPhotosPerInventory)
	}
}

func (c *checker) price(s string) decimal.Decimal {
	if !c.ok() {
		return decimal.Decimal{}
	}
	if s == "" {
		c.fail("RentalPrice", "missing: decimal text such as \"1500000.00\" is required")
		return decimal.Decimal{}
	}
	d, err := decimal.NewFromString(s)
	switch {
	case err != nil:
		c.fail("RentalPrice", "%q is not decimal text", s)
	case d.IsNegative() || d.GreaterThanOrEqual(maxPrice):
		c.fail("RentalPrice", "%s is out of range: from 0 to 9999999999999.99", s)
	case !d.Equal(d.Round(2)):
		c.fail("RentalPrice", "%s has more than two decimal places", s)
	}
	return d
}

// signatures refuses a half-signed inventory, as the database would.
func (c *checker) signatures(rec *Record) {
	switch {
	case !c.ok():
	case rec.IsSigned && (rec.ApprovalCode == nil || *rec.ApprovalCode == ""):
		c.fail("Approval_Code", "missing: a signed inventory has an approval code")
	case rec.IsSigned && rec.SignatureDate == nil:
		c.fail("SignatureDate", "missing: a signed inventory has a signature date")
	case !rec.IsSigned && rec.IsRemoteSigned:
		c.fail("IsRemoteSigned", "true, but the inventory is not signed")
	case !rec.IsSigned && rec.ApprovalCode != nil:
		c.fail("Approval_Code", "set, but the inventory is not signed: unsigned inventories have none")
	case !rec.IsSigned && rec.SignatureDate != nil:
		c.fail("SignatureDate", "set, but the inventory is not signed")
	case rec.ApprovalCode != nil:
		valid(c, "Approval_Code", *rec.ApprovalCode, inventory.ApprovalCodeValidator)
	}
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
	p.property = c.uuid("Property.PropertyId", prop.PropertyID)
	valid(c, "Property.Code", prop.Code, property.CodeValidator)
	c.text("Property.Address", prop.Address)
	valid(c, "Property.Address", prop.Address, property.AddressValidator)
	valid(c, "Property.Neighborhood", prop.Neighborhood, property.NeighborhoodValidator)
	c.text("Property.City", prop.City)
	valid(c, "Property.City", prop.City, property.CityValidator)
	c.text("Property.PropertyType", prop.PropertyType)
	valid(c, "Property.PropertyType", prop.PropertyType, property.PropertyTypeValidator)
	p.levels = 1
	if prop.Levels != nil {
		p.levels = *prop.Levels
	}
	valid(c, "Property.Levels", p.levels, property.LevelsValidator)
	p.propertyCreated = p.created
	if prop.CreationDate != "" {
		p.propertyCreated = c.time("Property.CreationDate", prop.CreationDate)
	}
}

func (c *checker) environments(p *plan) {
	seen := map[uuid.UUID]string{}
	unique := func(field string, id uuid.UUID) {
		if first, dup := seen[id]; dup && c.ok() {
			c.fail(field, "%s is used twice in this record (first at %s)", id, first)
		}
		seen[id] = field
	}
	seen[p.inventory] = "InventoryId"
	p.refs = map[string]string{}
	for i, env := range p.rec.EnvironmentDiagnostics {
		if !c.ok() {
			return
		}
		at := fmt.Sprintf("EnvironmentDiagnostics[%d]", i)
		e := envPlan{id: c.childID(at+".EnvironmentId", env.EnvironmentID, p.inventory, "environment", i), level: 1, order: i}
		unique(at+".EnvironmentId", e.id)
		c.text(at+".EnvironmentName", env.EnvironmentName)
		valid(c, at+".EnvironmentName", env.EnvironmentName, environment.NameValidator)
		if env.Level != nil {
			e.level = *env.Level
		}
		valid(c, at+".Level", e.level, environment.LevelValidator)
		if c.ok() && e.level > p.levels {
			c.fail(at+".Level", "%d is above the property's %d level(s)", e.level, p.levels)
		}
		if env.Order != nil {
			e.order = *env.Order
		}
		valid(c, at+".Order", e.order, environment.OrderValidator)
		for j, it := range env.ItemDiagnostic {
			at := fmt.Sprintf("%s.ItemDiagnostic[%d]", at, j)
			ip := itemPlan{id: c.childID(at+".ItemDiagnosticId", it.ItemDiagnosticID, e.id, "item", j)}
			unique(at+".ItemDiagnosticId", ip.id)
			c.text(at+".ItemName", it.ItemName)
			valid(c, at+".ItemName", it.ItemName, item.NameValidator)
			if c.ok() && it.Rating == nil {
				c.fail(at+".Rating", "missing: an integer rating is required")
			}
			if c.ok() {
				valid(c, at+".Rating", *it.Rating, item.RatingValidator)
			}
			if it.Order != nil {
				valid(c, at+".Order", *it.Order, item.OrderValidator)
			}
			if c.ok() && (it.Material == nil || it.Material.MaterialName == "") {
				c.fail(at+".Material.MaterialName", "missing: every item names its material")
			}
			if c.ok() {
				valid(c, at+".Material.MaterialName", it.Material.MaterialName, material.NameValidator)
			}
			for k, ph := range it.Photo {
				at := fmt.Sprintf("%s.Photo[%d]", at, k)
				pp := photoPlan{id: c.childID(at+".PhotoId", ph.PhotoID, ip.id, "photo", k)}
				unique(at+".PhotoId", pp.id)
				c.text(at+".StorageReference", ph.StorageReference)
				valid(c, at+".StorageReference", ph.StorageReference, photo.StorageReferenceValidator)
				if first, dup := p.refs[ph.StorageReference]; dup && c.ok() {
					c.fail(at+".StorageReference", "%q is used twice in this record (first at %s): it names one file", ph.StorageReference, first)
				}
				p.refs[ph.StorageReference] = at + ".StorageReference"
				if ph.Sha256 != nil {
					valid(c, at+".Sha256", *ph.Sha256, photo.Sha256Validator)
				}
				ip.photos = append(ip.photos, pp)
			}
			e.items = append(e.items, ip)
		}
		p.envs = append(p.envs, e)
	}
}

// nulField returns the path of the first text of v (a record, walked through
// its JSON field names) that holds a NUL character, or "" when none does.
// SQLite stores NUL and PostgreSQL refuses it, at insert time and without
// naming the field: refusing it here, for every text field at once, makes both
// databases take the same lines.
func nulField(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return nulField(v.Elem(), path)
		}
	case reflect.String:
		if strings.ContainsRune(v.String(), 0) {
			return path
		}
	case reflect.Slice:
		for i := range v.Len() {
			if f := nulField(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); f != "" {
				return f
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if path != "" {
				name = path + "." + name
			}
			if f := nulField(v.Field(i), name); f != "" {
				return f
			}
		}
	}
	return ""
}
