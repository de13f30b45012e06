package records

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/catalogue"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Service makes and changes inventories for the API's callers, each write
// in one transaction, as the caller's company (tenant.ForWriting), through
// Validate, and audited. What no caller may do (change a signed inventory,
// write another company's records) is refused below it, by the ent hooks and
// the tenancy policy; Service refuses it earlier only to say so sooner.
type Service struct {
	client *ent.Client
	log    *slog.Logger
	// pdfs makes the PDF of an inventory just signed; nil: A2 has it made
	// on its first request.
	pdfs PDFMaker
	// jobs inserts the jobs its writes cause (WithJobs); nil: none.
	jobs Jobs
	// files keeps the photos it takes; nil: none are taken.
	files *files.Store
	// ids tells whether an id a write gives is any record's already.
	ids IDIndex
	// readOnly refuses every write (INVENTORY_WRITES=off): the service
	// serves the read-only contract alone.
	readOnly bool
	// linkTTL is how long a signature link lasts unless asked otherwise
	// (DefaultLinkTTL when 0; WithLinkTTL).
	linkTTL time.Duration
	// drafts render the document each party signs (WithDrafts); nil: no
	// signature keeps what it signed.
	drafts Drafts
}

// NewService returns a Service writing to client, looking up the ids writes
// give in ids, its audit lines to log, the PDFs of inventories it signs
// through pdfs, the photos it takes to fs (either may be nil); readOnly, it
// refuses every write.
func NewService(client *ent.Client, ids IDIndex, log *slog.Logger, pdfs PDFMaker, fs *files.Store, readOnly bool) *Service {
	return &Service{client: client, ids: ids, log: log, pdfs: pdfs, files: fs, readOnly: readOnly}
}

// forWriting is tenant.ForWriting on a service that takes writes: one
// whose writes are turned off refuses them, to a caller with a company.
func (s *Service) forWriting(ctx context.Context) (context.Context, error) {
	if _, err := tenant.CompanyFrom(ctx); err != nil {
		return ctx, err
	}
	if s.readOnly {
		return ctx, apperr.Errorf(apperr.Forbidden, "writes are turned off on this service (INVENTORY_WRITES=off): it serves reads only")
	}
	return tenant.ForWriting(ctx)
}

// Create makes inv, a new inventory of the caller's company with its tree,
// and returns its id. inv.ID, when the client chose it, makes the request
// safe to send again: the same content again returns the inventory made the
// first time and writes nothing; other content under that id is CONFLICT.
// Children without ids get ids derived from inv.ID and their positions, so
// that a request sent again names the same records.
func (s *Service) Create(ctx context.Context, inv *Inventory) (uuid.UUID, error) {
	made, err := s.CreateAnswered(ctx, inv)
	if err != nil {
		return uuid.Nil, err
	}
	return made.ID, nil
}

// Made is an inventory Create made. Written, when not nil, is it as this
// request wrote it, in the rows a read of it returns: the inventory's own
// with its property (read under the company's policy before the write), and
// its environments and their items in the order a read returns them, each
// item with its material (read, likewise, when the tree was checked) and no
// photos. It is nil for a request sent again (nothing was written) and for a
// tree whose order a read decides by the items' names, which this does not
// compare as the database's collation would.
type Made struct {
	ID      uuid.UUID
	Written *WrittenTree
}

// WrittenTree is an inventory's rows as written (Made).
type WrittenTree struct {
	Inventory    *ent.Inventory
	Property     *ent.Property
	Environments []*ent.Environment
	// Items are each environment's, by its id.
	Items map[uuid.UUID][]*ent.Item
}

// CreateAnswered is Create, which says what it wrote, for an answer that
// does not read it back.
func (s *Service) CreateAnswered(ctx context.Context, inv *Inventory) (*Made, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return nil, err
	}
	inv.CompanyID, _ = tenant.CompanyFrom(ctx)
	if inv.ID == uuid.Nil {
		inv.ID = uuid.New()
	}
	prop, err := s.client.Property.Query().Where(property.ID(inv.PropertyID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Code: apperr.NotFound, Field: APINames.PropertyID,
			Message: fmt.Sprintf("property %s not found", inv.PropertyID)}
	}
	if err != nil {
		return nil, err
	}
	if err := Validate(inv, prop.Levels, APINames); err != nil {
		return nil, err
	}
	materials, err := s.checkMaterials(ctx, inv)
	if err != nil {
		return nil, err
	}
	// Twice at most: a request sent again while the first is still writing
	// waits for it (PostgreSQL holds the second insert of an id until the
	// first commits), fails on the id, and then finds the first's record.
	for attempt := 1; ; attempt++ {
		written, err := s.create(ctx, inv)
		switch {
		case err == nil && written == nil:
			s.audit(ctx, "records: createInventory sent again: nothing written", inv, 0)
			return &Made{ID: inv.ID}, nil
		case err == nil:
			s.audit(ctx, "records: inventory created", inv, 1)
			return &Made{ID: inv.ID, Written: written.tree(prop, materials)}, nil
		case attempt == 1 && (ent.IsConstraintError(err) || apperr.CodeOf(err) == apperr.Conflict):
			// The id in use may be the first request's, committed between
			// this one's two reads: read again.
			continue
		case ent.IsConstraintError(err):
			// Still not the caller's: an id of the tree became another
			// record's meanwhile. Said as for any id in use.
			e := idInUse(APINames.ID, inv.ID)
			e.Cause = err
			return nil, e
		default:
			return nil, err
		}
	}
}

// create writes inv unless the caller's company has it already, which it
// then compares, and returns what it wrote (nil when nothing: a request
// sent again). Any other record under one of its ids, the caller's or
// another company's, of any type, refuses it in the same words. The ids are
// looked up first, all at once: an inventory is read only when its id is an
// inventory's already, so a new one costs one statement before its write.
func (s *Service) create(ctx context.Context, inv *Inventory) (*Saved, error) {
	given := append([]givenID{{id: inv.ID, field: APINames.ID}}, treeIDs(inv, nil, nil)...)
	taken, table, err := s.firstTaken(ctx, given)
	switch {
	case err != nil:
		return nil, err
	case s.ids == nil || (taken != nil && taken.id == inv.ID && table == inventory.Table):
		if replayed, err := s.sentAgain(ctx, inv); replayed || err != nil {
			return nil, err
		}
		if taken != nil { // another company's inventory
			return nil, idInUse(taken.path(), taken.id)
		}
	case taken != nil:
		return nil, idInUse(taken.path(), taken.id)
	}
	// Its creation time is drawn here rather than by the schema's default,
	// so that the event carries the inventory as written (Written) without
	// reading it back; to the millisecond, as the store keeps it.
	created := *inv
	if created.CreatedAt.IsZero() {
		created.CreatedAt = time.Now().UTC()
	}
	created.CreatedAt = created.CreatedAt.Truncate(time.Millisecond)
	saved := &Saved{}
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		c := tx.Client()
		b := Batch{Inventories: []*ent.InventoryCreate{NewInventory(c, &created)}, Keep: saved}
		b.AddTree(c, &created)
		if err := b.Save(ctx, c); err != nil {
			return err
		}
		return Record(ctx, c, Event{Kind: recordevent.KindInventoryCreated, CompanyID: inv.CompanyID,
			PropertyID: inv.PropertyID, InventoryID: inv.ID, Version: 1, Written: created.asCreated()})
	})
	if err != nil {
		return nil, err
	}
	return saved, nil
}

// sentAgain reads the caller's inventory of inv's id, if any: the same
// content is a request sent again (replayed), other content CONFLICT.
func (s *Service) sentAgain(ctx context.Context, inv *Inventory) (replayed bool, err error) {
	stored, err := s.client.Inventory.Query().Where(inventory.ID(inv.ID)).
		WithEnvironments(func(q *ent.EnvironmentQuery) { q.WithItems() }).Only(ctx)
	switch {
	case err == nil && SameContent(FromEnt(stored), inv):
		return true, nil
	case err == nil:
		return false, otherContent(stored)
	case ent.IsNotFound(err):
		return false, nil
	}
	return false, err
}

// tree is the inventory saved holds as a read of it returns it, with prop
// and the materials of its items (read under the company's policy), or nil
// when saved does not hold all of it or a read would order its items by
// their names (internal/records does not know the database's collation).
func (saved *Saved) tree(prop *ent.Property, materials map[uuid.UUID]*ent.Material) *WrittenTree {
	if len(saved.Inventories) != 1 {
		return nil
	}
	// Unwrapped from the transaction, which is over: an edge the write did
	// not make is read with the client.
	t := &WrittenTree{Inventory: saved.Inventories[0].Unwrap(), Property: prop, Items: make(map[uuid.UUID][]*ent.Item, len(saved.Environments))}
	t.Inventory.Edges.Property = prop
	for _, env := range saved.Environments {
		env.Unwrap()
	}
	for _, it := range saved.Items {
		it.Unwrap()
		m := materials[it.MaterialID]
		if m == nil {
			return nil
		}
		it.Edges.Material = m
		t.Items[it.EnvironmentID] = append(t.Items[it.EnvironmentID], it)
	}
	// As the schema's interceptors order them (ent/schema: environment.go,
	// item.go): environments by order then id, items by order (none last),
	// then name, then id.
	t.Environments = slices.SortedStableFunc(slices.Values(saved.Environments), func(a, b *ent.Environment) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), bytes.Compare(a.ID[:], b.ID[:]))
	})
	for env, items := range t.Items {
		slices.SortStableFunc(items, func(a, b *ent.Item) int {
			return cmp.Or(compareOrder(a.Order, b.Order), bytes.Compare(a.ID[:], b.ID[:]))
		})
		for i := 1; i < len(items); i++ {
			if compareOrder(items[i-1].Order, items[i].Order) == 0 && items[i-1].Name != items[i].Name {
				return nil
			}
		}
		t.Items[env] = items
	}
	return t
}

// compareOrder compares two items' positions, the unordered last.
func compareOrder(a, b *int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// asCreated is inv as its creation writes it (version 1, updated when
// created), or nil when it comes signed: its dates are then the client's,
// read back as the database keeps them.
func (inv *Inventory) asCreated() *Written {
	if inv.Signature != (Signature{}) {
		return nil
	}
	return &Written{PropertyID: inv.PropertyID, Version: 1, CreatedAt: inv.CreatedAt, UpdatedAt: &inv.CreatedAt}
}

// Change is what updateInventory changes: the fields set, and the whole
// tree when Environments is not nil.
type Change struct {
	ID uuid.UUID
	// ExpectedVersion is the version the client read: a change made since
	// is not written over.
	ExpectedVersion int
	Type            *inventorytype.Type
	RentalPrice     *decimal.Decimal
	// Deposit, when set, is the new deposit: a deposit once recorded is
	// corrected, never removed.
	Deposit  *decimal.Decimal
	Currency *string
	// Environments replace the tree: an environment or item with the id of
	// one of the inventory's keeps that record (an item its photos); the
	// others are removed, their photos with them. Without an id, a record
	// is new.
	Environments *[]Environment
}

// Update changes an unsigned inventory of the caller's company.
func (s *Service) Update(ctx context.Context, ch *Change) (uuid.UUID, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	current, err := s.client.Inventory.Query().Where(inventory.ID(ch.ID)).WithProperty().Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return uuid.Nil, &apperr.Error{Code: apperr.NotFound, Field: APINames.ID, Message: fmt.Sprintf("inventory %s not found", ch.ID)}
	case err != nil:
		return uuid.Nil, err
	case current.IsSigned:
		return uuid.Nil, freeze.Refusal(ch.ID) // the hook would refuse the write: said before the rest is checked
	case current.Version != ch.ExpectedVersion:
		return uuid.Nil, stale(ch.ID, ch.ExpectedVersion)
	case anySigned(current):
		return uuid.Nil, halfSigned(ch.ID)
	}
	inv := FromEnt(current)
	if ch.Type != nil {
		inv.Type = *ch.Type
	}
	if ch.RentalPrice != nil {
		inv.RentalPrice = *ch.RentalPrice
	}
	if ch.Deposit != nil {
		inv.Deposit = ch.Deposit
	}
	if ch.Currency != nil {
		inv.Currency = *ch.Currency
	}
	if ch.Environments != nil {
		inv.Environments = *ch.Environments
		for i := range inv.Environments {
			newIDs(&inv.Environments[i])
		}
	}
	if err := Validate(inv, current.Edges.Property.Levels, APINames); err != nil {
		return uuid.Nil, err
	}
	if ch.Environments != nil {
		if _, err := s.checkMaterials(ctx, inv); err != nil {
			return uuid.Nil, err
		}
		if err := s.keepPhotos(ctx, inv); err != nil {
			return uuid.Nil, err
		}
	}
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		up := tx.Inventory.Update().Where(inventory.ID(inv.ID), inventory.Version(ch.ExpectedVersion)).
			SetInventoryType(inv.Type).SetRentalPrice(inv.RentalPrice).SetNillableDeposit(inv.Deposit).SetCurrency(inv.Currency)
		if n, err := up.Save(ctx); err != nil || n == 0 {
			return cmpErr(err, stale(inv.ID, ch.ExpectedVersion)) // changed since it was read above
		}
		if ch.Environments != nil {
			// The tree is replaced: the database cascades to items and
			// photos, and the records kept are written again under their ids.
			if _, err := tx.Environment.Delete().Where(environment.InventoryID(inv.ID)).Exec(ctx); err != nil {
				return err
			}
			var b Batch
			b.AddTree(tx.Client(), inv)
			if err := b.Save(ctx, tx.Client()); err != nil {
				return err
			}
		}
		return Record(ctx, tx.Client(), Event{Kind: recordevent.KindInventoryUpdated, CompanyID: inv.CompanyID,
			PropertyID: inv.PropertyID, InventoryID: inv.ID, Version: ch.ExpectedVersion + 1})
	})
	if ent.IsConstraintError(err) {
		// An id of the tree became another record's meanwhile.
		return uuid.Nil, &apperr.Error{Code: apperr.Conflict, Field: APINames.Environments,
			Message: "an id given is already another record's: leave it out to make a new record", Cause: err}
	}
	if err != nil {
		return uuid.Nil, err
	}
	s.audit(ctx, "records: inventory updated", inv, ch.ExpectedVersion+1)
	return inv.ID, nil
}

// newIDs gives the records of env without an id a new one: in a change, a
// record without an id is a new record, not the one at its position.
func newIDs(env *Environment) {
	if env.ID == uuid.Nil {
		env.ID = uuid.New()
	}
	for j := range env.Items {
		if env.Items[j].ID == uuid.Nil {
			env.Items[j].ID = uuid.New()
		}
	}
}

// otherContent refuses createInventory sent again under the id of stored,
// an inventory of the caller's, with other content. It says what would
// record that content: updateInventory while no one has signed, and once
// anyone has, a new inventory (pointing to updateInventory, which then
// refuses, sent clients round in a circle).
func otherContent(stored *ent.Inventory) *apperr.Error {
	switch {
	case stored.IsSigned:
		return &apperr.Error{Code: apperr.Conflict, Field: APINames.ID,
			Message: fmt.Sprintf("inventory %s is signed, and this createInventory holds other content: a signed inventory never changes (the signed record is evidence); make a new inventory, with another id or none, to record another state", stored.ID)}
	case anySigned(stored):
		return halfSigned(stored.ID)
	}
	return idInUse(APINames.ID, stored.ID)
}

// halfSigned refuses a change of an inventory one party has signed: the
// other must sign the record the first signed.
func halfSigned(id uuid.UUID) *apperr.Error {
	return &apperr.Error{Code: apperr.Conflict, Field: APINames.ID,
		Message: fmt.Sprintf("inventory %s is signed by one party and awaits the other: its content cannot change, so that both sign the same record; make a new inventory to record another state", id)}
}

func stale(id uuid.UUID, expected int) *apperr.Error {
	return &apperr.Error{Code: apperr.Conflict, Field: "expectedVersion",
		Message: fmt.Sprintf("inventory %s is no longer at version %d: it changed since it was read; read it again and send the change anew", id, expected)}
}

func cmpErr(err error, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// checkMaterials refuses a tree naming a material the catalogue does not
// have, naming the first item that does, and returns those it names.
func (s *Service) checkMaterials(ctx context.Context, inv *Inventory) (map[uuid.UUID]*ent.Material, error) {
	var ids []uuid.UUID
	for _, env := range inv.Environments {
		for _, it := range env.Items {
			ids = append(ids, it.MaterialID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	ids = slices.Compact(ids)
	// The catalogue's rows are only ever inserted (internal/catalogue): a
	// material the cache holds exists, as the reads' eager loads take it.
	have := make(map[uuid.UUID]*ent.Material, len(ids))
	var missing []uuid.UUID
	for _, id := range ids {
		if row, ok := s.catalogue(id); ok {
			have[id] = row
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		known, err := s.client.Material.Query().Where(material.IDIn(missing...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range known {
			have[m.ID] = m
			if s.client.Catalogue != nil {
				kept := *m
				s.client.Catalogue.Put(catalogue.Key{Table: "Material", ID: m.ID}, &kept)
			}
		}
	}
	for i, env := range inv.Environments {
		for j, it := range env.Items {
			if have[it.MaterialID] == nil {
				return nil, &apperr.Error{Code: apperr.NotFound, Message: fmt.Sprintf("material %s not found", it.MaterialID),
					Field: fmt.Sprintf("%s[%d].%s[%d].%s", APINames.Environments, i, APINames.Items, j, APINames.MaterialID)}
			}
		}
	}
	return have, nil
}

// catalogue is the material of id in the catalogue cache, if it holds it.
func (s *Service) catalogue(id uuid.UUID) (*ent.Material, bool) {
	if s.client.Catalogue == nil {
		return nil, false
	}
	row, ok := s.client.Catalogue.Get(catalogue.Key{Table: "Material", ID: id})
	if !ok {
		return nil, false
	}
	m, ok := row.(*ent.Material)
	if !ok {
		return nil, false
	}
	c := *m // its own copy: no request shares a row's edges
	return &c, true
}

// keepPhotos gives each item of a changed tree that keeps an item of the
// inventory that item's photos, written again with it; the items not kept
// lose theirs. An id given that is not one of the inventory's records of its
// kind is a new record's, and refused if it names any record already (of
// another inventory, another company, another type), as every id in use is.
func (s *Service) keepPhotos(ctx context.Context, inv *Inventory) error {
	envs, err := s.client.Environment.Query().Where(environment.InventoryID(inv.ID)).IDs(ctx)
	if err != nil {
		return err
	}
	items, err := s.client.Item.Query().Where(item.HasEnvironmentWith(environment.InventoryID(inv.ID))).IDs(ctx)
	if err != nil {
		return err
	}
	ownEnvs, ownItems := setOf(envs), setOf(items)
	if err := s.checkIDsUnused(ctx, treeIDs(inv, ownEnvs, ownItems)); err != nil {
		return err
	}
	var kept []uuid.UUID
	for _, env := range inv.Environments {
		for _, it := range env.Items {
			if ownItems[it.ID] {
				kept = append(kept, it.ID)
			}
		}
	}
	photos, err := s.client.Photo.Query().Where(photo.ItemIDIn(kept...)).All(ctx)
	if err != nil {
		return err
	}
	byItem := map[uuid.UUID][]Photo{}
	for _, p := range photos {
		byItem[p.ItemID] = append(byItem[p.ItemID], Photo{ID: p.ID, StorageReference: p.StorageReference, SHA256: p.Sha256})
	}
	for i := range inv.Environments {
		for j := range inv.Environments[i].Items {
			it := &inv.Environments[i].Items[j]
			it.Photos = byItem[it.ID]
		}
	}
	return nil
}

func setOf(ids []uuid.UUID) map[uuid.UUID]bool {
	set := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// InTx runs write in one transaction of client: nothing of it is seen
// unless all of it is. It is the one way the service runs a transaction
// (the API's writes, the import, the generator, the signed PDFs' digests).
// A write that fails is rolled back, always, even when the database is
// gone: the transaction holds a connection until then. A commit that fails
// is a *CommitError: the writes were all made, and may have been saved.
func InTx(ctx context.Context, client *ent.Client, write func(*ent.Tx) error) error {
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	if err := write(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, fmt.Errorf("rolling back: %w", rerr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return &CommitError{Err: err}
	}
	return nil
}

// CommitError is a transaction whose writes were all made and whose
// commit failed: unless the database said no, they may have been saved.
type CommitError struct{ Err error }

func (e *CommitError) Error() string { return "committing: " + e.Err.Error() }
func (e *CommitError) Unwrap() error { return e.Err }

// audit writes the audit line of an accepted write: who (the caller, its
// address), for which company, what, and which records.
func (s *Service) audit(ctx context.Context, what string, inv *Inventory, version int) {
	envs, items, photos := inv.Size()
	attrs := []slog.Attr{slog.String("company", inv.CompanyID.String()), slog.String("inventory", inv.ID.String()),
		slog.String("property", inv.PropertyID.String()), slog.Int("environments", envs), slog.Int("items", items),
		slog.Int("photos", photos)}
	if version > 0 {
		attrs = append(attrs, slog.Int("version", version))
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, what, tenant.CallerAttrs(ctx, attrs)...)
}
