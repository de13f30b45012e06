// Package repairs is the portfolio's repair list: the items flagged to
// repair in each property's latest signed inventory, the one both parties
// last agreed on. An item repaired since shows in the next signed inventory
// without the flag and leaves the list.
//
// The list is in the order a landlord walks it: by property (its code, then
// its id), then room (the environment's order, then its id), then item (its
// order, items without one last, then its name, then its id), the order A1
// and GraphQL list an inventory's rooms and items in. Its pages are read by
// keyset on that order (Page), so that a walk over them, the CSV export's
// included, never skips or repeats an item.
package repairs

import (
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/predicate"
	"github.com/propertyrecords/inventory/ent/property"
)

// Filter narrows the list: by the property's city (any case), one
// property, or inventories signed since a time.
type Filter struct {
	City       *string
	PropertyID *uuid.UUID
	Since      *time.Time
}

// The aliases of the tables an item is joined to, for the list's order.
const (
	environmentAlias = "repair_environment"
	inventoryAlias   = "repair_inventory"
	propertyAlias    = "repair_property"
)

// Query is the repair list as a query of items, in the list's order, for
// the caller to page (by offset, or by keyset with Page).
func Query(client *ent.Client, f *Filter) *ent.ItemQuery {
	inventories := []predicate.Inventory{latestSigned()}
	if f != nil {
		if f.City != nil {
			inventories = append(inventories, inventory.HasPropertyWith(property.CityEqualFold(strings.TrimSpace(*f.City))))
		}
		if f.PropertyID != nil {
			inventories = append(inventories, inventory.PropertyID(*f.PropertyID))
		}
		if f.Since != nil {
			inventories = append(inventories, inventory.SignatureDateGTE(*f.Since))
		}
	}
	return client.Item.Query().Where(
		item.ToRepair(true),
		joinPlace,
		onInventory(inventories...),
	).Order(inListOrder)
}

// onInventory applies inventory predicates to the inventory joinPlace joins.
func onInventory(ps ...predicate.Inventory) predicate.Item {
	return func(s *sql.Selector) {
		inv := sql.Dialect(s.Dialect()).Select().From(sql.Dialect(s.Dialect()).Table(inventory.Table).As(inventoryAlias))
		for _, p := range ps {
			p(inv)
		}
		s.Where(inv.P())
	}
}

// joinPlace joins each item to its environment, inventory and property, one
// row each (the edges are required), whose columns the order reads. It is a
// predicate, not part of the order, so that the keyset predicate of a page
// finds the joined tables too.
func joinPlace(s *sql.Selector) {
	d := sql.Dialect(s.Dialect())
	env := d.Table(environment.Table).As(environmentAlias)
	inv := d.Table(inventory.Table).As(inventoryAlias)
	prop := d.Table(property.Table).As(propertyAlias)
	s.Join(env).On(s.C(item.FieldEnvironmentID), env.C(environment.FieldID)).
		Join(inv).On(env.C(environment.FieldInventoryID), inv.C(inventory.FieldID)).
		Join(prop).On(inv.C(inventory.FieldPropertyID), prop.C(property.FieldID))
}

// orderKey is the list's order as SQL expressions of a query joined by
// joinPlace; key gives an item's values of them.
func orderKey(s *sql.Selector) []string {
	d := sql.Dialect(s.Dialect())
	env := d.Table(environment.Table).As(environmentAlias)
	prop := d.Table(property.Table).As(propertyAlias)
	order := s.C(item.FieldOrder)
	return []string{
		prop.C(property.FieldCode), prop.C(property.FieldID),
		env.C(environment.FieldOrder), env.C(environment.FieldID),
		// Items without an order come last, as A1 lists them: a NULL
		// cannot be compared in a keyset, so (unordered, order) stands
		// for it.
		"CASE WHEN " + order + " IS NULL THEN 1 ELSE 0 END", "COALESCE(" + order + ", 0)",
		s.C(item.FieldName), s.C(item.FieldID),
	}
}

// key is it's place in the list, the values of orderKey; it needs its
// environment, inventory and property loaded.
func key(it *ent.Item) []any {
	env := it.Edges.Environment
	prop := env.Edges.Inventory.Edges.Property
	unordered, order := 1, 0
	if it.Order != nil {
		unordered, order = 0, *it.Order
	}
	return []any{prop.Code, prop.ID, env.Order, env.ID, unordered, order, it.Name, it.ID}
}

// inListOrder orders a query joined by joinPlace in the list's order.
func inListOrder(s *sql.Selector) {
	s.OrderBy(orderKey(s)...)
}

// after keeps the items that come after it in the list's order.
func after(it *ent.Item) predicate.Item {
	values := key(it)
	return func(s *sql.Selector) {
		s.Where(sql.CompositeGT(orderKey(s), values...))
	}
}

// latestSigned holds for a signed inventory that no later signed inventory
// of its property follows (by signature date, then id for a tie).
func latestSigned() predicate.Inventory {
	return func(s *sql.Selector) {
		later := sql.Table(inventory.Table).As("later")
		newer := sql.Select(later.C(inventory.FieldID)).From(later).Where(sql.And(
			sql.ColumnsEQ(later.C(inventory.FieldPropertyID), s.C(inventory.FieldPropertyID)),
			sql.EQ(later.C(inventory.FieldIsSigned), true),
			sql.Or(
				sql.ColumnsGT(later.C(inventory.FieldSignatureDate), s.C(inventory.FieldSignatureDate)),
				sql.And(
					sql.ColumnsEQ(later.C(inventory.FieldSignatureDate), s.C(inventory.FieldSignatureDate)),
					sql.ColumnsGT(later.C(inventory.FieldID), s.C(inventory.FieldID)),
				),
			),
		))
		s.Where(sql.And(sql.EQ(s.C(inventory.FieldIsSigned), true), sql.NotExists(newer)))
	}
}
