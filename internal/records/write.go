package records

import (
	"context"

	"entgo.io/ent/dialect/sql/sqlgraph"

	"github.com/propertyrecords/inventory/ent"
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
// through ent's defaults, hooks and validators first. The API's writes keep
// ent's inserts, whatever their size: those pass the store's guard, which
// bounds a request's database time and counts its statements.
func (b *Batch) Save(ctx context.Context, c *ent.Client) error {
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

// keep appends the nodes ent wrote to dst, unless nil (nothing is kept).
func keep[T any](dst *[]T, nodes []T, err error) error {
	if dst != nil && err == nil {
		*dst = append(*dst, nodes...)
	}
	return err
}

// creator is an ent create builder, as the bulk path uses it.
type creator[M interface{ Tx() (*ent.Tx, error) }] interface {
	Row(context.Context) (*sqlgraph.CreateSpec, error)
	Mutation() M
}

// save writes rows with the database's bulk path when there are enough of
// them in a transaction, and with ent's (insert) otherwise.
func save[M interface{ Tx() (*ent.Tx, error) }, C creator[M]](ctx context.Context, rows []C, insert func([]C) error) error {
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
	specs := make([]*sqlgraph.CreateSpec, len(rows))
	for i, row := range rows {
		if specs[i], err = row.Row(ctx); err != nil {
			return err
		}
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
