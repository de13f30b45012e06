// Package repairs is the portfolio's repair list: the items flagged to
// repair in each property's latest signed inventory, the one both parties
// last agreed on. An item repaired since shows in the next signed inventory
// without the flag and leaves the list.
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

// Query is the repair list as a query of items, for the caller to page.
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
		item.HasEnvironmentWith(environment.HasInventoryWith(inventories...)),
	)
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
