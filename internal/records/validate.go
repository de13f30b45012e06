package records

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// Names are the names an interface gives the fields of a tree, for the paths
// its errors name. A list's name is followed by the index ([1]) and a field
// of an element by a dot: Environments "environments" and Rating "rating"
// make environments[1].items[0].rating.
type Names struct {
	ID, PropertyID, Type, RentalPrice, Deposit, Currency       string
	Signed, RemoteSigned, ApprovalCode, SignatureDate, PDF     string
	RequiredSignatures                                         string
	Environments, EnvironmentID, EnvironmentName               string
	EnvironmentDescription, Level, EnvironmentOrder            string
	Items, ItemID, ItemName, ItemDescription, Rating           string
	ItemOrder, MaterialID, MaterialName                        string
	Photos, PhotoID, StorageReference, PhotoSHA256             string
	PropertyCode, PropertyAddress, PropertyNeighborhood        string
	PropertyCity, PropertyType, PropertyDetail, PropertyLevels string
}

// byPattern is the bound of a text whose validator's pattern bounds it (an
// ISO 4217 code, a SHA-256 in hex): its refusal says the pattern.
const byPattern = 0

// maxPrice bounds rental prices and deposits as the database does (numeric(15,2), and a
// CHECK that SQLite's 15 significant digits round-trip).
var maxPrice = decimal.New(1, 13)

// Validate checks inv against the rules every writer obeys, and gives each
// child without an id its derived one (DeriveIDs). levels is the number of
// levels of the inventory's property, which its environments may not be
// above. It returns the first problem found, as INVALID_ARGUMENT naming the
// field in names.
func Validate(inv *Inventory, levels int, names *Names) *apperr.Error {
	DeriveIDs(inv)
	c := &checker{names: names, env: -1, item: -1, photo: -1}
	if c.ok() && inventorytype.Validate(int(inv.Type)) != nil {
		c.fail(names.Type, "%d is not a code from 0 to 3", int(inv.Type))
	}
	c.price(names.RentalPrice, inv.RentalPrice)
	if inv.Deposit != nil {
		c.price(names.Deposit, *inv.Deposit)
	}
	c.text(names.Currency, inv.Currency, byPattern, inventory.CurrencyValidator)
	c.signature(&inv.Signature)
	c.parties(inv.RequiredSignatures)
	c.treeSize(inv)
	c.environments(inv, levels)
	return c.err
}

// ValidateProperty checks a property an import line carries.
func ValidateProperty(p *Property, names *Names) *apperr.Error {
	c := &checker{names: names, env: -1, item: -1, photo: -1}
	c.text(names.PropertyCode, p.Code, schema.MaxCodeRunes, property.CodeValidator)
	c.required(names.PropertyAddress, p.Address, schema.MaxAddressRunes, property.AddressValidator)
	c.text(names.PropertyNeighborhood, p.Neighborhood, schema.MaxNameRunes, property.NeighborhoodValidator)
	c.required(names.PropertyCity, p.City, schema.MaxNameRunes, property.CityValidator)
	c.required(names.PropertyType, p.PropertyType, schema.MaxCodeRunes, property.PropertyTypeValidator)
	if p.Detail != nil {
		c.text(names.PropertyDetail, *p.Detail, schema.MaxDescriptionRunes, property.DetailValidator)
	}
	valid(c, names.PropertyLevels, p.Levels, property.LevelsValidator)
	return c.err
}

// checker keeps the first problem of a tree, and where in the tree it is
// (env, item, photo: the indices on the way down, -1 above them), so that
// the path of a field is only written out for a field that fails.
type checker struct {
	names            *Names
	env, item, photo int
	err              *apperr.Error
}

func (c *checker) ok() bool { return c.err == nil }

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = apperr.InvalidField(c.path(field), format, args...)
	}
}

// path is field's path from the tree's root at the checker's position.
func (c *checker) path(field string) string {
	var b strings.Builder
	if c.env >= 0 {
		fmt.Fprintf(&b, "%s[%d]", c.names.Environments, c.env)
		if c.item >= 0 {
			fmt.Fprintf(&b, ".%s[%d]", c.names.Items, c.item)
			if c.photo >= 0 {
				fmt.Fprintf(&b, ".%s[%d]", c.names.Photos, c.photo)
			}
		}
	}
	if field != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(field)
	}
	return b.String()
}

// valid runs an ent schema validator, so that every writer refuses what the
// schema refuses, under the field's own name.
func valid[T any](c *checker, field string, v T, validator func(T) error) {
	if c.ok() && validator != nil {
		if err := validator(v); err != nil {
			c.fail(field, "%v is refused: %v", v, err)
		}
	}
}

// text checks a text field: at most maxRunes characters (the schema's
// bound, ent/schema/bounds.go, said here with its number; byPattern: the
// validator's pattern bounds it), no NUL character
// (SQLite stores it, PostgreSQL refuses it at insert time without naming the
// field, so both databases are told no here, by name), then the schema's
// validator. A refusal quotes the start of the text, never all of it.
func (c *checker) text(field, s string, maxRunes int, validator func(string) error) {
	switch {
	case !c.ok():
		return
	case maxRunes != byPattern && len(s) > maxRunes && utf8.RuneCountInString(s) > maxRunes:
		c.fail(field, "%d characters long: at most %d are taken", utf8.RuneCountInString(s), maxRunes)
	case strings.IndexByte(s, 0) >= 0:
		c.fail(field, "contains a NUL character (\\u0000): text may not, since PostgreSQL cannot store it")
	case validator != nil:
		if err := validator(s); err != nil {
			c.fail(field, "%s is refused: %v", apperr.Quote(s), err)
		}
	}
}

// required is text that may not be empty.
func (c *checker) required(field, s string, maxRunes int, validator func(string) error) {
	if c.ok() && s == "" {
		c.fail(field, "missing: a non-empty string is required")
	}
	c.text(field, s, maxRunes, validator)
}

// price checks an amount of money (the rental price, the deposit): the
// database's bounds, and cents at most.
func (c *checker) price(field string, d decimal.Decimal) {
	switch {
	case !c.ok():
	case d.IsNegative() || d.GreaterThanOrEqual(maxPrice):
		c.fail(field, "%s is out of range: from 0 to 9999999999999.99", d)
	case !d.Equal(d.Round(2)):
		c.fail(field, "%s has more than two decimal places", d)
	}
}

// signature refuses a half-signed inventory, as the database's CHECK would
// (without naming the field).
func (c *checker) signature(s *Signature) {
	n := c.names
	switch {
	case !c.ok():
	case s.Signed && (s.ApprovalCode == nil || *s.ApprovalCode == ""):
		c.fail(n.ApprovalCode, "missing: a signed inventory has an approval code")
	case s.Signed && s.Date == nil:
		c.fail(n.SignatureDate, "missing: a signed inventory has a signature date")
	case !s.Signed && s.Remote:
		c.fail(n.RemoteSigned, "true, but the inventory is not signed")
	case !s.Signed && s.ApprovalCode != nil:
		c.fail(n.ApprovalCode, "set, but the inventory is not signed: unsigned inventories have none")
	case !s.Signed && s.Date != nil:
		c.fail(n.SignatureDate, "set, but the inventory is not signed")
	case s.ApprovalCode != nil:
		c.text(n.ApprovalCode, *s.ApprovalCode, schema.MaxCodeRunes, inventory.ApprovalCodeValidator)
	}
	if s.PDFSha256 != nil {
		c.text(n.PDF, *s.PDFSha256, byPattern, inventory.PdfSha256Validator)
	}
}

// parties refuses required signatures that name no party, or one twice
// (nil is the default, the agent and the owner).
func (c *checker) parties(parties []Party) {
	if !c.ok() || parties == nil {
		return
	}
	if len(parties) == 0 {
		c.fail(c.names.RequiredSignatures, "empty: name at least one party whose signature makes the inventory signed")
		return
	}
	for i, p := range parties {
		switch {
		case !p.valid():
			c.fail(c.names.RequiredSignatures, "%q is not AGENT, OWNER or TENANT", p)
		case slices.Contains(parties[:i], p):
			c.fail(c.names.RequiredSignatures, "%s is named twice: name each party once", p)
		default:
			continue
		}
		return
	}
}

// treeSize refuses an inventory larger than GraphQL reads whole: the bounds
// of its lists (the ListSize annotations of ent/schema), each of which is also
// the default size of its list, so that a report is never cut short.
func (c *checker) treeSize(inv *Inventory) {
	n := c.names
	envs := inv.Environments
	if c.ok() && len(envs) > ent.InventoryEnvironmentsMax {
		c.fail(n.Environments, "%d environments: an inventory holds at most %d", len(envs), ent.InventoryEnvironmentsMax)
	}
	items, photos := 0, 0
	for i, env := range envs {
		if c.ok() && len(env.Items) > ent.EnvironmentItemsMax {
			c.env = i
			c.fail(n.Items, "%d items: an environment holds at most %d", len(env.Items), ent.EnvironmentItemsMax)
		}
		items += len(env.Items)
		for j, it := range env.Items {
			if c.ok() && len(it.Photos) > ent.ItemPhotosMax {
				c.env, c.item = i, j
				c.fail(n.Photos, "%d photos: an item has at most %d", len(it.Photos), ent.ItemPhotosMax)
			}
			photos += len(it.Photos)
		}
	}
	c.env, c.item = -1, -1
	if c.ok() && items > ent.EnvironmentItemsPerInventory {
		c.fail(n.Environments, "%d items in all: an inventory holds at most %d", items, ent.EnvironmentItemsPerInventory)
	}
	if c.ok() && photos > ent.ItemPhotosPerInventory {
		c.fail(n.Environments, "%d photos in all: an inventory holds at most %d", photos, ent.ItemPhotosPerInventory)
	}
}

func (c *checker) environments(inv *Inventory, levels int) {
	n := c.names
	// Ids are unique within the tree, the inventory's included; each first
	// use is kept by its position, written out only for a repeat.
	type place struct {
		field            string
		env, item, photo int
	}
	seen := map[uuid.UUID]place{inv.ID: {field: n.ID, env: -1, item: -1, photo: -1}}
	unique := func(field string, id uuid.UUID) {
		if first, dup := seen[id]; dup && c.ok() {
			at := checker{names: n, env: first.env, item: first.item, photo: first.photo}
			c.fail(field, "%s is used twice in this record (first at %s)", id, at.path(first.field))
		}
		seen[id] = place{field, c.env, c.item, c.photo}
	}
	refs := map[string]place{}
	for i := range inv.Environments {
		if !c.ok() {
			return
		}
		env := &inv.Environments[i]
		c.env, c.item, c.photo = i, -1, -1
		unique(n.EnvironmentID, env.ID)
		c.required(n.EnvironmentName, env.Name, schema.MaxNameRunes, environment.NameValidator)
		c.text(n.EnvironmentDescription, env.Description, schema.MaxDescriptionRunes, environment.DescriptionValidator)
		valid(c, n.Level, env.Level, environment.LevelValidator)
		if c.ok() && env.Level > levels {
			c.fail(n.Level, "%d is above the property's %d level(s)", env.Level, levels)
		}
		valid(c, n.EnvironmentOrder, env.Order, environment.OrderValidator)
		for j := range env.Items {
			it := &env.Items[j]
			c.item, c.photo = j, -1
			unique(n.ItemID, it.ID)
			c.required(n.ItemName, it.Name, schema.MaxNameRunes, item.NameValidator)
			c.text(n.ItemDescription, it.Description, schema.MaxDescriptionRunes, item.DescriptionValidator)
			valid(c, n.Rating, it.Rating, item.RatingValidator)
			if it.Order != nil {
				valid(c, n.ItemOrder, *it.Order, item.OrderValidator)
			}
			if c.ok() && it.MaterialID == uuid.Nil && it.MaterialName == "" {
				c.fail(cmp.Or(n.MaterialName, n.MaterialID), "missing: every item names its material")
			}
			if it.MaterialName != "" {
				c.text(n.MaterialName, it.MaterialName, schema.MaxNameRunes, material.NameValidator)
			}
			for k := range it.Photos {
				ph := &it.Photos[k]
				c.photo = k
				unique(n.PhotoID, ph.ID)
				c.required(n.StorageReference, ph.StorageReference, byPattern, photo.StorageReferenceValidator)
				if first, dup := refs[ph.StorageReference]; dup && c.ok() {
					at := checker{names: n, env: first.env, item: first.item, photo: first.photo}
					c.fail(n.StorageReference, "%q is used twice in this record (first at %s): it names one file", ph.StorageReference, at.path(first.field))
				}
				refs[ph.StorageReference] = place{n.StorageReference, c.env, c.item, c.photo}
				if ph.SHA256 != nil {
					c.text(n.PhotoSHA256, *ph.SHA256, byPattern, photo.Sha256Validator)
				}
			}
		}
	}
	c.env, c.item, c.photo = -1, -1, -1
}
