package records

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
)

// FromEnt is the tree of a stored inventory, loaded with its environments,
// their items and, where they matter, the items' materials and photos.
func FromEnt(inv *ent.Inventory) *Inventory {
	out := &Inventory{
		ID: inv.ID, CompanyID: inv.CompanyID, PropertyID: inv.PropertyID, Type: inv.InventoryType,
		RentalPrice: inv.RentalPrice, Deposit: inv.Deposit, Currency: inv.Currency, CreatedAt: inv.CreatedAt,
		Signature: Signature{Signed: inv.IsSigned, Remote: inv.IsRemoteSigned, ApprovalCode: inv.ApprovalCode,
			Date: inv.SignatureDate, Agent: inv.AgentSignatureDate, Owner: inv.OwnerSignatureDate, Tenant: inv.TenantSignatureDate,
			PDFSha256: inv.PdfSha256},
		RequiredSignatures: RequiredSignatures(inv),
	}
	for _, env := range inv.Edges.Environments {
		e := Environment{ID: env.ID, Name: env.Name, Description: env.Description, Level: env.Level, Order: env.Order}
		for _, it := range env.Edges.Items {
			i := Item{ID: it.ID, Name: it.Name, Description: it.Description, MaterialID: it.MaterialID,
				Rating: it.Rating, Order: it.Order, ToRepair: it.ToRepair}
			if it.Edges.Material != nil {
				i.MaterialName = it.Edges.Material.Name
			}
			for _, ph := range it.Edges.Photos {
				i.Photos = append(i.Photos, Photo{ID: ph.ID, StorageReference: ph.StorageReference, SHA256: ph.Sha256})
			}
			e.Items = append(e.Items, i)
		}
		out.Environments = append(out.Environments, e)
	}
	return out
}

// SameContent reports whether a and b hold the same content as a create
// states it: property, type, price, deposit, currency, the parties required to
// sign, and the environments and items with their ids. What a create does not state (the signed state,
// photos, dates) is not compared: a create sent again after the inventory
// was signed, or given photos, is still the same create. Children are
// matched by id, since the database gives them back in their order, not in
// the order a tree lists them.
func SameContent(a, b *Inventory) bool {
	return a.ID == b.ID && a.PropertyID == b.PropertyID && a.Type == b.Type && a.RentalPrice.Equal(b.RentalPrice) &&
		sameAmount(a.Deposit, b.Deposit) &&
		a.Currency == b.Currency && StoredParties(a.RequiredSignatures) == StoredParties(b.RequiredSignatures) &&
		sameEnvironments(a.Environments, b.Environments, false)
}

// SameRecord reports whether a and b are the same record in everything an
// import states: SameContent, and the signed state, the creation date and
// the photos. Materials are compared by name where both name theirs.
func SameRecord(a, b *Inventory) bool {
	sa, sb := &a.Signature, &b.Signature
	return SameContent(a, b) && a.CompanyID == b.CompanyID && sameTime(a.CreatedAt, b.CreatedAt) &&
		sa.Signed == sb.Signed && sa.Remote == sb.Remote && same(sa.ApprovalCode, sb.ApprovalCode) &&
		sameTimes(sa.Date, sb.Date) && sameTimes(sa.Agent, sb.Agent) && sameTimes(sa.Owner, sb.Owner) && sameTimes(sa.Tenant, sb.Tenant) &&
		same(sa.PDFSha256, sb.PDFSha256) && sameEnvironments(a.Environments, b.Environments, true)
}

func sameEnvironments(a, b []Environment, whole bool) bool {
	return sameByID(a, b, func(e *Environment) uuid.UUID { return e.ID }, func(x, y *Environment) bool {
		return x.Name == y.Name && x.Description == y.Description && x.Level == y.Level && x.Order == y.Order &&
			sameByID(x.Items, y.Items, func(i *Item) uuid.UUID { return i.ID }, func(x, y *Item) bool {
				return x.Name == y.Name && x.Description == y.Description && x.Rating == y.Rating &&
					same(x.Order, y.Order) && x.ToRepair == y.ToRepair && sameMaterial(x, y) &&
					(!whole || sameByID(x.Photos, y.Photos, func(p *Photo) uuid.UUID { return p.ID }, func(x, y *Photo) bool {
						return x.StorageReference == y.StorageReference && same(x.SHA256, y.SHA256)
					}))
			})
	})
}

// sameByID reports whether a and b hold records of the same ids, each the
// same as its namesake by eq.
func sameByID[T any](a, b []T, id func(*T) uuid.UUID, eq func(x, y *T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	byID := make(map[uuid.UUID]*T, len(a))
	for i := range a {
		byID[id(&a[i])] = &a[i]
	}
	for i := range b {
		x, ok := byID[id(&b[i])]
		if !ok || !eq(x, &b[i]) {
			return false
		}
	}
	return true
}

func sameMaterial(a, b *Item) bool {
	if a.MaterialName != "" && b.MaterialName != "" {
		return a.MaterialName == b.MaterialName
	}
	return a.MaterialID == b.MaterialID && a.MaterialID != uuid.Nil
}

func same[T comparable](a, b *T) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// sameTime compares instants to the millisecond, the precision the store
// keeps (internal/store).
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

func sameTimes(a, b *time.Time) bool {
	return a == b || a != nil && b != nil && sameTime(*a, *b)
}

// sameAmount compares optional amounts by value: 1800000.5 is 1800000.50.
func sameAmount(a, b *decimal.Decimal) bool {
	return a == b || a != nil && b != nil && a.Equal(*b)
}
