package schema

// ListSize bounds what a list edge returns in GraphQL. Every list edge has
// one (a test walks the schema for any without), and ent/entc.go turns it into
// the field's size argument and its @listSize directive, which the GraphQL
// cost check reads to price the operation before anything runs.
//
// An edge that is also an entgql.RelayConnection() is paged with first and
// after. Any other is a plain list with a size argument first, read whole by
// default: for those, Max is also what an import accepts per parent
// (internal/transfer), so the default returns every record there is.
type ListSize struct {
	// Default is the size when first is not given; 0 means Max.
	Default int
	// Max is the most one parent returns.
	Max int
	// PerInventory, when set, is the most an inventory holds in all (an
	// import refuses more): it bounds the price of a list below an inventory
	// more tightly than the product of the bounds on the way down.
	PerInventory int
}

// Name implements ent's schema.Annotation.
func (ListSize) Name() string { return "ListSize" }

// The bounds of an inventory's tree. A report reads an inventory whole, so
// they are generous: a house of 60 rooms, 200 items in one room.
var (
	environmentsPerInventory = ListSize{Max: 60}
	itemsPerEnvironment      = ListSize{Max: 200, PerInventory: 1_000}
	photosPerItem            = ListSize{Max: 20, PerInventory: 3_000}
)

// Lists that span more than one record (a property's inventories over the
// years, a material's items across the company) are paged like the root ones.
var pagedList = ListSize{Default: 20, Max: 100}
