// Package freeze keeps a signed inventory as it was signed. A signed
// inventory is evidence (a deposit dispute reads it): no write changes it,
// its environments, items or photos. The rule is enforced once, below every
// writer, by the ent hooks of this package on the inventory, environment,
// item, photo and property schemas, so that no code path (the API, the
// import, the generator, a future one, a direct ent write) can go around it.
//
// An inventory is frozen once it is signed and committed: the transaction
// that creates a signed inventory (an import, the generator) writes its tree
// too, since no one else sees any of it before the commit. Two writes are let
// through on a frozen inventory:
//   - recording the digest of its signed PDF, or of a photo, where none is
//     recorded (A2 stores the PDF of a signed inventory on first request; a
//     photo's file may be stored after its record): that records the
//     evidence, it does not change it, and a digest once recorded stays;
//   - a correction the operator asked for by name (Correct: `inventoryd
//     import --correct-signed`), which is audited.
package freeze

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	gen "github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/hook"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/predicate"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Refusal is the answer to a write that would change signed inventory id.
func Refusal(id uuid.UUID) *apperr.Error {
	return apperr.Errorf(apperr.Conflict,
		"inventory %s is signed: a signed inventory, its environments, items and photos cannot change (the signed record is evidence); make a new inventory to record another state", id)
}

type grantKey struct{}

// grant is a correction of one signed inventory, asked for by the operator.
type grant struct {
	inventory uuid.UUID
	reason    string
	next      *grant
}

// Correct lets the writes made with ctx change signed inventory id, for
// reason (which names who asked and why: "import of records.ndjson, line 17,
// with --correct-signed"). Each correction committed is an audit line. Only
// an operator's command asks for one; the API never does.
func Correct(ctx context.Context, id uuid.UUID, reason string) context.Context {
	next, _ := ctx.Value(grantKey{}).(*grant)
	return context.WithValue(ctx, grantKey{}, &grant{inventory: id, reason: reason, next: next})
}

func granted(ctx context.Context, id uuid.UUID) (string, bool) {
	for g, _ := ctx.Value(grantKey{}).(*grant); g != nil; g = g.next {
		if g.inventory == id {
			return g.reason, true
		}
	}
	return "", false
}

// Inventories is the hook of the inventory schema.
func Inventories() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.InventoryFunc(func(ctx context.Context, m *gen.InventoryMutation) (ent.Value, error) {
			w := begin(m)
			if m.Op().Is(ent.OpCreate) {
				v, err := next.Mutate(ctx, m)
				if id, ok := m.ID(); err == nil && ok {
					w.created(id)
				}
				return v, err
			}
			where := m.Predicates()
			if id, ok := m.ID(); ok {
				where = append(where, inventory.ID(id))
			}
			records := func(inv *gen.Inventory) bool { return digestOnly(m) && inv.PdfSha256 == nil }
			if err := w.admit(ctx, m.Client(), records, where...); err != nil {
				return nil, err
			}
			return w.mutate(ctx, next, m)
		})
	}
}

// digestOnly reports whether m is an update that only sets the field of a
// file's digest (the signed PDF's, a photo's).
func digestOnly(m ent.Mutation) bool {
	fields := m.Fields()
	return m.Op().Is(ent.OpUpdate|ent.OpUpdateOne) && len(fields) == 1 &&
		(fields[0] == inventory.FieldPdfSha256 || fields[0] == photo.FieldSha256) &&
		len(m.AddedFields()) == 0 && len(m.ClearedFields()) == 0
}

// Environments is the hook of the environment schema.
func Environments() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.EnvironmentFunc(func(ctx context.Context, m *gen.EnvironmentMutation) (ent.Value, error) {
			w := begin(m)
			if m.Op().Is(ent.OpCreate) {
				parent, _ := m.InventoryID()
				if !w.writable(parent) {
					if err := w.admitParent(ctx, m.Client(), "inventory", parent, inventory.ID(parent)); err != nil {
						return nil, err
					}
				}
				v, err := next.Mutate(ctx, m)
				if id, ok := m.ID(); err == nil && ok {
					w.note(environments, id, parent)
				}
				return v, err
			}
			where := m.Predicates()
			if id, ok := m.ID(); ok {
				where = append(where, environment.ID(id))
			}
			if err := w.admit(ctx, m.Client(), nil, inventory.HasEnvironmentsWith(where...)); err != nil {
				return nil, err
			}
			return w.mutate(ctx, next, m)
		})
	}
}

// Items is the hook of the item schema.
func Items() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.ItemFunc(func(ctx context.Context, m *gen.ItemMutation) (ent.Value, error) {
			w := begin(m)
			if m.Op().Is(ent.OpCreate) {
				parent, _ := m.EnvironmentID()
				inv, known := w.parent(environments, parent)
				if !known {
					var err error
					if inv, err = w.admitOne(ctx, m.Client(), "environment", parent, inventory.HasEnvironmentsWith(environment.ID(parent))); err != nil {
						return nil, err
					}
					w.note(environments, parent, inv)
				}
				v, err := next.Mutate(ctx, m)
				if id, ok := m.ID(); err == nil && ok {
					w.note(items, id, inv)
				}
				return v, err
			}
			where := m.Predicates()
			if id, ok := m.ID(); ok {
				where = append(where, item.ID(id))
			}
			if err := w.admit(ctx, m.Client(), nil, inventory.HasEnvironmentsWith(environment.HasItemsWith(where...))); err != nil {
				return nil, err
			}
			return w.mutate(ctx, next, m)
		})
	}
}

// Photos is the hook of the photo schema.
func Photos() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return hook.PhotoFunc(func(ctx context.Context, m *gen.PhotoMutation) (ent.Value, error) {
			w := begin(m)
			if m.Op().Is(ent.OpCreate) {
				parent, _ := m.ItemID()
				if _, known := w.parent(items, parent); !known {
					inv, err := w.admitOne(ctx, m.Client(), "item", parent, inventory.HasEnvironmentsWith(environment.HasItemsWith(item.ID(parent))))
					if err != nil {
						return nil, err
					}
					w.note(items, parent, inv)
				}
				return next.Mutate(ctx, m)
			}
			where := m.Predicates()
			if id, ok := m.ID(); ok {
				where = append(where, photo.ID(id))
			}
			var records func(*gen.Inventory) bool
			if digestOnly(m) {
				recorded, err := m.Client().Photo.Query().Where(append(where, photo.Sha256NotNil())...).Exist(ctx)
				if err != nil {
					return nil, err
				}
				records = func(*gen.Inventory) bool { return !recorded }
			}
			if err := w.admit(ctx, m.Client(), records, inventory.HasEnvironmentsWith(environment.HasItemsWith(item.HasPhotosWith(where...)))); err != nil {
				return nil, err
			}
			return w.mutate(ctx, next, m)
		})
	}
}

// Properties is the hook of the property schema: the database deletes a
// property's inventories with it (a cascade no hook sees), so deleting a
// property with a signed inventory is refused like deleting the inventory.
func Properties() ent.Hook {
	return hook.On(func(next ent.Mutator) ent.Mutator {
		return hook.PropertyFunc(func(ctx context.Context, m *gen.PropertyMutation) (ent.Value, error) {
			w := begin(m)
			where := m.Predicates()
			if id, ok := m.ID(); ok {
				where = append(where, property.ID(id))
			}
			if err := w.admit(ctx, m.Client(), nil, inventory.HasPropertyWith(where...)); err != nil {
				return nil, err
			}
			return w.mutate(ctx, next, m)
		})
	}, ent.OpDelete|ent.OpDeleteOne)
}

// scoped is what a check needs of any mutation: its transaction.
type scoped interface {
	TxKey() any
	Tx() (*gen.Tx, error)
}

// write is one mutation's check, with what its transaction has learnt
// (state, nil outside a transaction) and the corrections it makes.
type write struct {
	*state
	corrections []correction
}

type correction struct {
	inventory uuid.UUID
	reason    string
}

func begin(m scoped) *write { return &write{state: stateOf(m)} }

// admit checks the inventories matching where (the ones the mutation
// writes to) and, on PostgreSQL, locks them until the transaction ends, so
// that none is signed before the write commits. digest, when set, tells
// whether the write only records a digest where none is, of a file of inv.
func (w *write) admit(ctx context.Context, c *gen.Client, digest func(inv *gen.Inventory) bool, where ...predicate.Inventory) error {
	rows, err := c.Inventory.Query().Where(append(where, lockRows)...).
		Select(inventory.FieldID, inventory.FieldIsSigned, inventory.FieldPdfSha256).All(ctx)
	if err != nil {
		return err
	}
	for _, inv := range rows {
		if err := w.decide(ctx, inv, digest); err != nil {
			return err
		}
	}
	return nil
}

// admitOne checks the one inventory of a new child's parent (kind id), and
// returns its id.
func (w *write) admitOne(ctx context.Context, c *gen.Client, kind string, id uuid.UUID, where ...predicate.Inventory) (uuid.UUID, error) {
	rows, err := c.Inventory.Query().Where(append(where, lockRows)...).
		Select(inventory.FieldID, inventory.FieldIsSigned, inventory.FieldPdfSha256).All(ctx)
	switch {
	case err != nil:
		return uuid.Nil, err
	case len(rows) == 0 && tenant.IsUnrestricted(ctx):
		// No inventory to keep: ent's validators, then the database's
		// foreign key, refuse a child of nothing.
		return uuid.Nil, nil
	case len(rows) == 0:
		// The parent of a company's write must be that company's: the
		// foreign key alone would take another company's.
		return uuid.Nil, apperr.Errorf(apperr.NotFound, "%s %s not found", kind, id)
	}
	return rows[0].ID, w.decide(ctx, rows[0], nil)
}

func (w *write) admitParent(ctx context.Context, c *gen.Client, kind string, id uuid.UUID, where ...predicate.Inventory) error {
	_, err := w.admitOne(ctx, c, kind, id, where...)
	return err
}

// decide lets a write to inv through, or refuses it.
func (w *write) decide(ctx context.Context, inv *gen.Inventory, digest func(*gen.Inventory) bool) error {
	if w.writable(inv.ID) {
		return nil
	}
	if !inv.IsSigned {
		w.open(inv.ID)
		return nil
	}
	if reason, ok := granted(ctx, inv.ID); ok {
		w.corrections = append(w.corrections, correction{inv.ID, reason})
		w.open(inv.ID) // the rest of the correction's tree needs no check of its own
		return nil
	}
	if digest != nil && digest(inv) {
		return nil
	}
	return Refusal(inv.ID)
}

// mutate runs a mutation that was let through. Its corrections are audited
// when its transaction commits, or now when it ran outside one.
func (w *write) mutate(ctx context.Context, next ent.Mutator, m ent.Mutation) (ent.Value, error) {
	v, err := next.Mutate(ctx, m)
	if err != nil || len(w.corrections) == 0 {
		return v, err
	}
	if w.state == nil {
		for _, c := range w.corrections {
			audit(ctx, c)
		}
		return v, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.corrections {
		w.corrected[c.inventory] = c.reason
	}
	return v, err
}

func audit(ctx context.Context, c correction) {
	slog.Default().InfoContext(ctx, "freeze: a signed inventory was corrected", "inventory", c.inventory.String(), "reason", c.reason)
}

// lockRows locks the inventories a check reads, on PostgreSQL: a check and
// the write after it are two statements, and a signature committed between
// them would otherwise be written over. SQLite runs one writer at a time.
var lockRows = predicate.Inventory(func(s *sql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.ForUpdate()
	}
})

// state is what a transaction's checks have learnt, so that a tree written
// in one costs no check per row: the inventories it may write to (created in
// it, or found unsigned and locked), and the environments and items of those.
type state struct {
	mu           sync.Mutex
	inventories  map[uuid.UUID]bool
	environments map[uuid.UUID]uuid.UUID // environment: its inventory
	items        map[uuid.UUID]uuid.UUID // item: its inventory
	corrected    map[uuid.UUID]string    // corrected inventory: reason, audited at commit
}

// states holds the state of each transaction open, by its TxKey, from its
// first write to its end.
var states sync.Map

// stateOf is the state of m's transaction, nil outside one.
func stateOf(m scoped) *state {
	key := m.TxKey()
	if key == nil {
		return nil
	}
	if s, ok := states.Load(key); ok {
		return s.(*state)
	}
	s := &state{inventories: map[uuid.UUID]bool{}, environments: map[uuid.UUID]uuid.UUID{},
		items: map[uuid.UUID]uuid.UUID{}, corrected: map[uuid.UUID]string{}}
	states.Store(key, s)
	tx, err := m.Tx()
	if err != nil { // TxKey said it is in one
		panic(fmt.Sprintf("freeze: %v", err))
	}
	tx.OnCommit(func(next gen.Committer) gen.Committer {
		return gen.CommitFunc(func(ctx context.Context, tx *gen.Tx) error {
			err := next.Commit(ctx, tx)
			states.Delete(key)
			if err == nil {
				for id, reason := range s.corrected {
					audit(ctx, correction{id, reason})
				}
			}
			return err
		})
	})
	tx.OnRollback(func(next gen.Rollbacker) gen.Rollbacker {
		return gen.RollbackFunc(func(ctx context.Context, tx *gen.Tx) error {
			states.Delete(key)
			return next.Rollback(ctx, tx)
		})
	})
	return s
}

// Forget drops what the checks of tx have learnt of the records it wrote so
// far, so that a transaction writing many trees one after another (the
// generator's) holds no memory for those it is done with. Writing more under
// them would be checked against the database again: forgetting never lets a
// write through that would otherwise be refused.
func Forget(tx *gen.Tx) {
	if s, ok := states.Load(tx.TxKey()); ok {
		s := s.(*state)
		s.mu.Lock()
		defer s.mu.Unlock()
		clear(s.inventories)
		clear(s.environments)
		clear(s.items)
	}
}

func (s *state) writable(id uuid.UUID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inventories[id]
}

// created notes an inventory the transaction created: its tree is written
// in the same transaction, signed or not.
func (s *state) created(id uuid.UUID) { s.open(id) }

// open notes an inventory the transaction may write to.
func (s *state) open(id uuid.UUID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inventories[id] = true
}

// The kinds of children a state keeps the inventories of.
const (
	environments = iota
	items
)

func (s *state) children(kind int) map[uuid.UUID]uuid.UUID {
	if kind == environments {
		return s.environments
	}
	return s.items
}

// parent returns the inventory of a child (of kind) the transaction wrote
// or checked, when the transaction may write to it.
func (s *state) parent(kind int, id uuid.UUID) (uuid.UUID, bool) {
	if s == nil {
		return uuid.Nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inv, ok := s.children(kind)[id]
	return inv, ok && s.inventories[inv]
}

// note keeps the inventory of a child (of kind) of an inventory the
// transaction may write to.
func (s *state) note(kind int, id, inventory uuid.UUID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inventories[inventory] {
		s.children(kind)[id] = inventory
	}
}
