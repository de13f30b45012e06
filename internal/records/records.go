// Package records holds the rules of an inventory's record, in one place for
// every way records enter: the import (internal/transfer), the generator
// (internal/datagen) and the GraphQL mutations (Service). Each writer turns
// what it reads into an Inventory tree, Validate checks it against the ent
// schema's validators, the tree's bounds and the signed-state rules, and the
// tree is written with the builders of write.go.
//
// Errors name the field as the caller's own interface spells it (Names): the
// import's EnvironmentDiagnostics[1].ItemDiagnostic[0].Rating, GraphQL's
// environments[1].items[0].rating.
package records

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// Inventory is one inventory with its tree, as a writer hands it over.
type Inventory struct {
	// ID is the inventory's id; every writer gives one (the API draws one
	// when the client does not).
	ID, CompanyID, PropertyID uuid.UUID
	Type                      inventorytype.Type
	RentalPrice               decimal.Decimal
	// Deposit is the security deposit, in Currency; nil when none was
	// recorded.
	Deposit  *decimal.Decimal
	Currency string
	// CreatedAt is the creation date; zero is now.
	CreatedAt time.Time
	// Signature is the signed state; the zero value is unsigned.
	Signature Signature
	// RequiredSignatures are the parties whose signatures make it signed;
	// nil is the agent and the owner.
	RequiredSignatures []Party
	Environments       []Environment
}

// Signature is an inventory's signed state. A signed inventory is frozen
// (internal/freeze): its record is evidence.
type Signature struct {
	Signed, Remote     bool
	ApprovalCode       *string
	Date, Agent, Owner *time.Time
	Tenant             *time.Time
	// PDFSha256 is the digest of the signed PDF, once stored.
	PDFSha256 *string
}

// Environment is a room or area of the inventory.
type Environment struct {
	// ID, when nil, is derived from the inventory's id and the position
	// (ChildID), so that the same tree written again gets the same ids.
	ID                uuid.UUID
	Name, Description string
	Level, Order      int
	Items             []Item
}

// Item is a diagnosed item of an environment.
type Item struct {
	// ID, when nil, is derived from the environment's id and the position.
	ID                uuid.UUID
	Name, Description string
	// MaterialID names the item's material in the shared catalogue; a writer
	// that names materials by name (the import) sets MaterialName, and the
	// id once the catalogue has it.
	MaterialID   uuid.UUID
	MaterialName string
	Rating       int
	// Order is nil when the inspector gave none.
	Order    *int
	ToRepair bool
	Photos   []Photo
}

// Photo is a photo of an item, kept in the file store under its storage
// reference.
type Photo struct {
	// ID, when nil, is derived from the item's id and the position.
	ID               uuid.UUID
	StorageReference string
	SHA256           *string
}

// Property is the property an import line carries along with its inventory.
type Property struct {
	ID, CompanyID                     uuid.UUID
	Code, Address, Neighborhood, City string
	PropertyType                      string
	IsActive                          bool
	Detail                            *string
	Levels                            int
	CreatedAt                         time.Time
}

// ChildID is the id of a child record given none: derived from its parent's
// id, its kind ("environment", "item" or "photo") and its position, so that
// writing a tree again (a re-import, a create sent twice) finds the same
// records instead of making new ones. The import's derivation, unchanged.
func ChildID(parent uuid.UUID, kind string, n int) uuid.UUID {
	return uuid.NewSHA1(parent, fmt.Appendf(nil, "%s/%d", kind, n))
}

// DeriveIDs gives every child of inv without an id its derived one.
func DeriveIDs(inv *Inventory) {
	for i := range inv.Environments {
		env := &inv.Environments[i]
		if env.ID == uuid.Nil {
			env.ID = ChildID(inv.ID, "environment", i)
		}
		for j := range env.Items {
			it := &env.Items[j]
			if it.ID == uuid.Nil {
				it.ID = ChildID(env.ID, "item", j)
			}
			for k := range it.Photos {
				if it.Photos[k].ID == uuid.Nil {
					it.Photos[k].ID = ChildID(it.ID, "photo", k)
				}
			}
		}
	}
}

// Size counts the records of inv's tree.
func (inv *Inventory) Size() (environments, items, photos int) {
	for _, env := range inv.Environments {
		environments++
		for _, it := range env.Items {
			items++
			photos += len(it.Photos)
		}
	}
	return environments, items, photos
}
