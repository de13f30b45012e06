// Package compare says what changed between two inventories of the same
// property, item by item: the evidence of a deposit dispute, where the
// move-in (colocación) and the move-out (desocupación) that followed it are
// set side by side.
//
// Items have no id shared across inventories: each inventory is a new
// inspection. They are matched as an inspector reads the two documents:
// environments by name and level, then items by name within matched
// environments (names compared without case, accents or extra spaces); among
// several of the same name, in their order. What finds no partner was added
// or removed; a rename reads as one of each (see docs/decisions.md).
package compare

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// Change is how an item changed from one inventory to the other.
type Change string

const (
	Unchanged Change = "UNCHANGED" // the same rating
	Worse     Change = "WORSE"     // a lower rating
	Better    Change = "BETTER"    // a higher rating (repaired)
	Added     Change = "ADDED"     // only in the later inventory
	Removed   Change = "REMOVED"   // only in the earlier one
)

// Presence is whether an environment is in both inventories.
type Presence string

const (
	Both        Presence = "BOTH"
	AddedRoom   Presence = "ADDED"
	RemovedRoom Presence = "REMOVED"
)

// Comparison is the answer: the two inventories, their environments side
// by side, and the counts.
type Comparison struct {
	// ID, and the IDs of its parts, are stable keys for clients' normalized
	// caches (see key): the same comparison, environment or item gets the
	// same id in every answer.
	ID           uuid.UUID
	FromID, ToID uuid.UUID
	Environments []*Environment
	Summary      Summary
}

// Summary counts the items by change, and those newly flagged to repair.
type Summary struct {
	ID                                       uuid.UUID // the comparison's
	Unchanged, Worse, Better, Added, Removed int
	NewlyToRepair                            int
}

// Environment is a room matched across the two inventories.
type Environment struct {
	ID                                 uuid.UUID
	Name                               string
	Level                              int
	Presence                           Presence
	FromEnvironmentID, ToEnvironmentID *uuid.UUID
	Items                              []*Item
}

// Item is an item matched across the two inventories; the From fields are
// empty for an added item, the To fields for a removed one.
type Item struct {
	ID                             uuid.UUID
	Name                           string
	Change                         Change
	FromItemID, ToItemID           *uuid.UUID
	FromRating, ToRating           *int
	RatingChange                   *int
	FromToRepair, ToToRepair       *bool
	BecameToRepair                 bool
	FromDescription, ToDescription *string
	FromMaterial, ToMaterial       *string
	FromPhotos, ToPhotos           []*ent.Photo
}

// Load reads the two inventories of the caller's company (ctx), their
// environments, items, materials and photos, in a constant five statements,
// and compares them. Either one missing, or another company's, is
// NotFound; two of different properties are Invalid.
func Load(ctx context.Context, client *ent.Client, from, to uuid.UUID) (*Comparison, error) {
	found, err := client.Inventory.Query().
		Where(inventory.IDIn(from, to)).
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.Order(ent.Asc(environment.FieldOrder), ent.Asc(environment.FieldID)).
				WithItems(func(q *ent.ItemQuery) { q.WithMaterial().WithPhotos() })
		}).
		All(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[uuid.UUID]*ent.Inventory{}
	for _, inv := range found {
		byID[inv.ID] = inv
	}
	for _, id := range []uuid.UUID{from, to} {
		if byID[id] == nil {
			return nil, apperr.Errorf(apperr.NotFound, "inventory %s not found", id)
		}
	}
	if byID[from].PropertyID != byID[to].PropertyID {
		return nil, apperr.InvalidField("to",
			"inventories %s and %s are of different properties: only inventories of the same property compare", from, to)
	}
	return Compare(byID[from], byID[to]), nil
}

// Compare sets two loaded inventories side by side: the later inventory's
// environments and items in its order, then what only the earlier one has,
// in the earlier one's order.
func Compare(from, to *ent.Inventory) *Comparison {
	c := &Comparison{ID: key("comparison", &from.ID, &to.ID), FromID: from.ID, ToID: to.ID, Environments: []*Environment{}}
	c.Summary.ID = c.ID
	fromEnvs, toEnvs := from.Edges.Environments, to.Edges.Environments
	pairs := match(fromEnvs, toEnvs, func(e *ent.Environment) envKey { return envKey{normalize(e.Name), e.Level} }, envOrder)
	for _, p := range pairs {
		env := &Environment{Presence: Both, Items: []*Item{}}
		var fromItems, toItems []*ent.Item
		switch {
		case p.from == nil:
			env.Presence = AddedRoom
		case p.to == nil:
			env.Presence = RemovedRoom
		}
		if p.from != nil {
			env.Name, env.Level, env.FromEnvironmentID, fromItems = p.from.Name, p.from.Level, &p.from.ID, p.from.Edges.Items
		}
		if p.to != nil {
			env.Name, env.Level, env.ToEnvironmentID, toItems = p.to.Name, p.to.Level, &p.to.ID, p.to.Edges.Items
		}
		env.ID = key("environment", &from.ID, &to.ID, env.FromEnvironmentID, env.ToEnvironmentID)
		for _, ip := range match(fromItems, toItems, func(i *ent.Item) string { return normalize(i.Name) }, itemOrder) {
			item := compareItems(ip.from, ip.to)
			item.ID = key("item", &from.ID, &to.ID, item.FromItemID, item.ToItemID)
			c.Summary.count(item)
			env.Items = append(env.Items, item)
		}
		c.Environments = append(c.Environments, env)
	}
	return c
}

// keySpace is the namespace of the comparison's keys (a random UUID, fixed).
var keySpace = uuid.MustParse("6f1e9a52-3c1d-4b7e-9a0f-5d2c8e4b7a31")

// key is the stable id of a part of a comparison: a name-based UUID (version
// 5) of what it is and the records it sets side by side (nil for a side
// without one). The parts are not records, so node(id:) does not read them;
// the ids are keys for clients' caches (Apollo, urql's graphcache), which
// key an object by __typename and id, and ids are UUIDs everywhere in this
// API.
func key(kind string, ids ...*uuid.UUID) uuid.UUID {
	name := kind
	for _, id := range ids {
		part := "-"
		if id != nil {
			part = id.String()
		}
		name += "/" + part
	}
	return uuid.NewSHA1(keySpace, []byte(name))
}

func compareItems(from, to *ent.Item) *Item {
	// Empty, not absent: both photo lists are in every answer.
	item := &Item{FromPhotos: []*ent.Photo{}, ToPhotos: []*ent.Photo{}}
	if from != nil {
		item.Name, item.FromItemID, item.FromRating, item.FromToRepair = from.Name, &from.ID, &from.Rating, &from.ToRepair
		item.FromDescription, item.FromMaterial = &from.Description, materialName(from)
		item.FromPhotos = append(item.FromPhotos, from.Edges.Photos...)
	}
	if to != nil {
		item.Name, item.ToItemID, item.ToRating, item.ToToRepair = to.Name, &to.ID, &to.Rating, &to.ToRepair
		item.ToDescription, item.ToMaterial = &to.Description, materialName(to)
		item.ToPhotos = append(item.ToPhotos, to.Edges.Photos...)
		item.BecameToRepair = to.ToRepair && (from == nil || !from.ToRepair)
	}
	switch {
	case from == nil:
		item.Change = Added
	case to == nil:
		item.Change = Removed
	default:
		delta := to.Rating - from.Rating
		item.RatingChange = &delta
		item.Change = Unchanged
		if delta < 0 {
			item.Change = Worse
		} else if delta > 0 {
			item.Change = Better
		}
	}
	return item
}

func materialName(i *ent.Item) *string {
	if m := i.Edges.Material; m != nil {
		return &m.Name
	}
	return nil
}

func (s *Summary) count(item *Item) {
	switch item.Change {
	case Unchanged:
		s.Unchanged++
	case Worse:
		s.Worse++
	case Better:
		s.Better++
	case Added:
		s.Added++
	case Removed:
		s.Removed++
	}
	if item.BecameToRepair {
		s.NewlyToRepair++
	}
}

type envKey struct {
	name  string
	level int
}

func envOrder(a, b *ent.Environment) int {
	return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.ID.String(), b.ID.String()))
}

// itemOrder puts items in their order, those without one last.
func itemOrder(a, b *ent.Item) int {
	switch {
	case a.Order == nil && b.Order != nil:
		return 1
	case a.Order != nil && b.Order == nil:
		return -1
	case a.Order != nil && b.Order != nil && *a.Order != *b.Order:
		return cmp.Compare(*a.Order, *b.Order)
	}
	return strings.Compare(a.ID.String(), b.ID.String())
}

type pair[T any] struct{ from, to T }

// match pairs the records of two lists with the same key, the n-th of a key
// in from with the n-th in to (each list in order); the pairs come in to's
// order, then from's unpaired records in from's order.
func match[T comparable, K comparable](from, to []T, key func(T) K, order func(a, b T) int) []pair[T] {
	from, to = slices.SortedFunc(slices.Values(from), order), slices.SortedFunc(slices.Values(to), order)
	waiting := make(map[K][]T, len(from))
	for _, f := range from {
		k := key(f)
		waiting[k] = append(waiting[k], f)
	}
	var zero T
	paired := map[T]bool{}
	var pairs []pair[T]
	for _, t := range to {
		k := key(t)
		if queue := waiting[k]; len(queue) > 0 {
			pairs = append(pairs, pair[T]{queue[0], t})
			paired[queue[0]] = true
			waiting[k] = queue[1:]
			continue
		}
		pairs = append(pairs, pair[T]{zero, t})
	}
	for _, f := range from {
		if !paired[f] {
			pairs = append(pairs, pair[T]{f, zero})
		}
	}
	return pairs
}

// unaccent drops combining marks: "Habitación" and "Habitacion" are one room.
var unaccent = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// normalize is the name two records are matched on: without case, accents,
// or spaces at the ends and in runs.
func normalize(name string) string {
	plain := name
	for _, r := range name {
		if r >= utf8.RuneSelf { // most names are plain ASCII: no transform to run
			if out, _, err := transform.String(unaccent, name); err == nil {
				plain = out
			}
			break
		}
	}
	return strings.Join(strings.Fields(strings.ToLower(plain)), " ")
}

// MarshalGQL writes the change as its GraphQL enum value.
func (c Change) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(c)) }

// UnmarshalGQL reads a GraphQL enum value.
func (c *Change) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	switch Change(s) {
	case Unchanged, Worse, Better, Added, Removed:
		*c = Change(s)
		return nil
	}
	return apperr.Errorf(apperr.Invalid, "%v is not an ItemChange", v)
}

// MarshalGQL writes the presence as its GraphQL enum value.
func (p Presence) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(p)) }

// UnmarshalGQL reads a GraphQL enum value.
func (p *Presence) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	switch Presence(s) {
	case Both, AddedRoom, RemovedRoom:
		*p = Presence(s)
		return nil
	}
	return apperr.Errorf(apperr.Invalid, "%v is not an EnvironmentPresence", v)
}

// FirstPair finds two inventories worth comparing among the caller's
// (ctx's company), for the IDE's comparison example: a move-in and the
// move-out of the same tenancy (a colocación and the desocupación that
// follows it on one property, with no other colocación between them), the
// comparison a deposit is settled by. Failing one, the first two, oldest
// first, of the first property that has two; ok is false when no property
// has.
func FirstPair(ctx context.Context, client *ent.Client) (from, to uuid.UUID, ok bool, err error) {
	// Bounded reads: a property's history is a handful of inventories, so
	// the first 500 by property hold a pair unless nearly every property
	// has only one.
	tenancies, err := client.Inventory.Query().
		Where(inventory.InventoryTypeIn(inventorytype.Colocacion, inventorytype.Desocupacion)).
		Order(ent.Asc(inventory.FieldPropertyID), ent.Asc(inventory.FieldCreatedAt), ent.Asc(inventory.FieldID)).
		Limit(500).Select(inventory.FieldID, inventory.FieldPropertyID, inventory.FieldInventoryType).All(ctx)
	if err != nil {
		return uuid.Nil, uuid.Nil, false, err
	}
	for i := 1; i < len(tenancies); i++ {
		in, out := tenancies[i-1], tenancies[i]
		if in.PropertyID == out.PropertyID && in.InventoryType == inventorytype.Colocacion && out.InventoryType == inventorytype.Desocupacion {
			return in.ID, out.ID, true, nil
		}
	}
	invs, err := client.Inventory.Query().
		Order(ent.Asc(inventory.FieldPropertyID), ent.Asc(inventory.FieldCreatedAt), ent.Asc(inventory.FieldID)).
		Limit(500).Select(inventory.FieldID, inventory.FieldPropertyID).All(ctx)
	if err != nil {
		return uuid.Nil, uuid.Nil, false, err
	}
	for i := 1; i < len(invs); i++ {
		if invs[i].PropertyID == invs[i-1].PropertyID {
			return invs[i-1].ID, invs[i].ID, true, nil
		}
	}
	return uuid.Nil, uuid.Nil, false, nil
}
