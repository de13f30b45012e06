package records

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/sqlgraph"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/store"
)

// NewInventory is the builder of inv's own row, signed state included.
func NewInventory(c *ent.Client, inv *Inventory) *ent.InventoryCreate {
	s := &inv.Signature
	create := c.Inventory.Create().SetID(inv.ID).SetCompanyID(inv.CompanyID).SetPropertyID(inv.PropertyID).
		SetInventoryType(inv.Type).SetRentalPrice(inv.RentalPrice).SetNillableDeposit(inv.Deposit).SetCurrency(inv.Currency).
		SetIsSigned(s.Signed).SetIsRemoteSigned(s.Remote).SetNillableApprovalCode(s.ApprovalCode).
		SetNillableSignatureDate(s.Date).SetNillableAgentSignatureDate(s.Agent).
		SetNillableOwnerSignatureDate(s.Owner).SetNillableTenantSignatureDate(s.Tenant).SetNillablePdfSha256(s.PDFSha256).
		SetRequiredSignatures(StoredParties(inv.RequiredSignatures))
	if !inv.CreatedAt.IsZero() {
		create.SetCreatedAt(inv.CreatedAt)
	}
	return create
}

// Batch holds rows waiting to be written in bulk inserts: one statement per
// table and store.BatchSize rows, so that writing a tree costs the same few
// statements whatever its size.
type Batch struct {
	Inventories  []*ent.InventoryCreate
	Environments []*ent.EnvironmentCreate
	Items        []*ent.ItemCreate
	Photos       []*ent.PhotoCreate
	// Keep, when set, is given the nodes of the rows ent's inserts wrote:
	// the rows as written, defaults and hooks' values included.
	Keep *Saved
}

// Saved is what a Batch wrote with ent's inserts, as ent's nodes.
type Saved struct {
	Inventories  []*ent.Inventory
	Environments []*ent.Environment
	Items        []*ent.Item
}

// AddTree adds the builders of inv's environments, items and photos, each
// with the company of inv. Every item's MaterialID must be set.
func (b *Batch) AddTree(c *ent.Client, inv *Inventory) {
	for _, env := range inv.Environments {
		b.Environments = append(b.Environments, c.Environment.Create().SetID(env.ID).SetCompanyID(inv.CompanyID).
			SetInventoryID(inv.ID).SetName(env.Name).SetDescription(env.Description).SetLevel(env.Level).SetOrder(env.Order))
		for _, it := range env.Items {
			b.Items = append(b.Items, c.Item.Create().SetID(it.ID).SetCompanyID(inv.CompanyID).SetEnvironmentID(env.ID).
				SetMaterialID(it.MaterialID).SetName(it.Name).SetDescription(it.Description).SetRating(it.Rating).
				SetNillableOrder(it.Order).SetToRepair(it.ToRepair))
			for _, ph := range it.Photos {
				b.Photos = append(b.Photos, c.Photo.Create().SetID(ph.ID).SetCompanyID(inv.CompanyID).SetItemID(it.ID).
					SetStorageReference(ph.StorageReference).SetNillableSha256(ph.SHA256))
			}
		}
	}
}

// Rows counts the rows waiting.
func (b *Batch) Rows() int {
	return len(b.Inventories) + len(b.Environments) + len(b.Items) + len(b.Photos)
}

// WriteError is a bulk insert the database refused, and of what.
type WriteError struct {
	// What is the table's records: "inventories", "environments", ...
	What string
	Err  error
}

func (e *WriteError) Error() string { return "writing " + e.What + ": " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Save writes what b holds, parents before their children, and empties it.
// In an operator's bulk load (BulkLoads: the generator, the import), a
// table's rows are written with the database's bulk path (store.InsertRows:
// COPY on PostgreSQL) once there are store.BulkRows of them in a
// transaction, and with ent's bulk insert otherwise; either way each row goes
// through ent's defaults, hooks and validators first. The API's writes go to
// PostgreSQL as one statement for all their tables (saveAsOneStatement) and
// to SQLite as ent's inserts: both through the store's guard, which bounds a
// request's database time and counts its statements.
func (b *Batch) Save(ctx context.Context, c *ent.Client) error {
	switch written, err := b.saveAsOneStatement(ctx); {
	case err != nil:
		return &WriteError{What: "an inventory's tree", Err: err}
	case written:
		*b = Batch{Keep: b.Keep}
		return nil
	}
	// kept are the lists Keep is given, or nil ones.
	var kept struct {
		Inventories  *[]*ent.Inventory
		Environments *[]*ent.Environment
		Items        *[]*ent.Item
	}
	if b.Keep != nil {
		kept.Inventories, kept.Environments, kept.Items = &b.Keep.Inventories, &b.Keep.Environments, &b.Keep.Items
	}
	steps := []struct {
		what string
		save func() error
	}{
		{"inventories", func() error {
			return save(ctx, b.Inventories, func(r []*ent.InventoryCreate) error {
				nodes, err := c.Inventory.CreateBulk(r...).Save(ctx)
				return keep(kept.Inventories, nodes, err)
			})
		}},
		{"environments", func() error {
			return save(ctx, b.Environments, func(r []*ent.EnvironmentCreate) error {
				nodes, err := c.Environment.CreateBulk(r...).Save(ctx)
				return keep(kept.Environments, nodes, err)
			})
		}},
		{"items", func() error {
			return save(ctx, b.Items, func(r []*ent.ItemCreate) error {
				nodes, err := c.Item.CreateBulk(r...).Save(ctx)
				return keep(kept.Items, nodes, err)
			})
		}},
		{"photos", func() error {
			return save(ctx, b.Photos, func(r []*ent.PhotoCreate) error { return c.Photo.CreateBulk(r...).Exec(ctx) })
		}},
	}
	for _, step := range steps {
		if err := step.save(); err != nil {
			return &WriteError{What: step.what, Err: err}
		}
	}
	*b = Batch{Keep: b.Keep}
	return nil
}

// saveAsOneStatement writes an API write's rows (not a bulk load's, nor
// EntInserts') as one statement (store.OneInsert): each row through ent's
// defaults, hooks and validators (Row), the statement through the store's
// drivers (Tx.Exec), as ent's inserts are. written is false, with nothing
// done, where the database or the size does not allow it.
func (b *Batch) saveAsOneStatement(ctx context.Context) (written bool, err error) {
	if _, set := ctx.Value(bulkKey{}).(bool); set || len(b.Inventories) == 0 {
		return false, nil
	}
	tx, err := b.Inventories[0].Mutation().Tx()
	if err != nil || tx.Dialect() != dialect.Postgres || b.parametersAtMost() > store.PostgresMaxParameters {
		// Not in a transaction, on SQLite, or too large: ent's inserts.
		return false, nil
	}
	inventories, invSpecs, err := rowsOf(ctx, b.Inventories)
	if err != nil {
		return false, err
	}
	environments, envSpecs, err := rowsOf(ctx, b.Environments)
	if err != nil {
		return false, err
	}
	items, itemSpecs, err := rowsOf(ctx, b.Items)
	if err != nil {
		return false, err
	}
	_, photoSpecs, err := rowsOf(ctx, b.Photos)
	if err != nil {
		return false, err
	}
	query, args, ok, err := store.OneInsert(tx.Dialect(), invSpecs, envSpecs, itemSpecs, photoSpecs)
	if err == nil && !ok { // parametersAtMost said they fit
		err = fmt.Errorf("records: %d rows do not fit one statement", b.Rows())
	}
	if err != nil {
		return false, err
	}
	if err := tx.Exec(ctx, query, args); err != nil {
		return false, ent.AsConstraintError(err)
	}
	if b.Keep != nil {
		b.Keep.Inventories = append(b.Keep.Inventories, inventories...)
		b.Keep.Environments = append(b.Keep.Environments, environments...)
		b.Keep.Items = append(b.Keep.Items, items...)
	}
	return true, nil
}

// parametersAtMost bounds the parameters b's rows take in one statement:
// every column of every row.
func (b *Batch) parametersAtMost() int {
	return len(b.Inventories)*len(inventory.Columns) + len(b.Environments)*len(environment.Columns) +
		len(b.Items)*len(item.Columns) + len(b.Photos)*len(photo.Columns)
}

// rowsOf runs Row on every builder: the nodes as ent's insert would answer
// them, and their specs.
func rowsOf[N any, M interface{ Tx() (*ent.Tx, error) }, C creator[N, M]](ctx context.Context, builders []C) ([]N, []*sqlgraph.CreateSpec, error) {
	nodes := make([]N, len(builders))
	specs := make([]*sqlgraph.CreateSpec, len(builders))
	for i, c := range builders {
		var err error
		if nodes[i], specs[i], err = c.Row(ctx); err != nil {
			return nil, nil, err
		}
	}
	return nodes, specs, nil
}

// keep appends the nodes ent wrote to dst, unless nil (nothing is kept).
func keep[T any](dst *[]T, nodes []T, err error) error {
	if dst != nil && err == nil {
		*dst = append(*dst, nodes...)
	}
	return err
}

// creator is an ent create builder, as the bulk path uses it.
type creator[N any, M interface{ Tx() (*ent.Tx, error) }] interface {
	Row(context.Context) (N, *sqlgraph.CreateSpec, error)
	Mutation() M
}

// save writes rows with the database's bulk path when there are enough of
// them in a transaction, and with ent's (insert) otherwise.
func save[N any, M interface{ Tx() (*ent.Tx, error) }, C creator[N, M]](ctx context.Context, rows []C, insert func([]C) error) error {
	if bulk, _ := ctx.Value(bulkKey{}).(bool); !bulk || len(rows) < store.BulkRows {
		return store.SaveInBatches(ctx, rows, insert)
	}
	tx, err := rows[0].Mutation().Tx()
	if err != nil { // not in a transaction: ent's own
		return store.SaveInBatches(ctx, rows, insert)
	}
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return err
	}
	_, specs, err := rowsOf(ctx, rows)
	if err != nil {
		return err
	}
	return ent.AsConstraintError(store.InsertRows(ctx, sqlTx, tx.Dialect(), specs))
}

type bulkKey struct{}

// BulkLoads marks the writes made with ctx as an operator's bulk load,
// which Save writes with the database's bulk path, unless EntInserts said
// otherwise.
func BulkLoads(ctx context.Context) context.Context {
	if ctx.Value(bulkKey{}) != nil {
		return ctx
	}
	return context.WithValue(ctx, bulkKey{}, true)
}

// EntInserts has Save write with ent's bulk inserts whatever the size, in a
// bulk load too: the reference the bulk path's rows are compared with
// (TestBulkLoadStoresWhatEntInsertsStore).
func EntInserts(ctx context.Context) context.Context {
	return context.WithValue(ctx, bulkKey{}, false)
}
