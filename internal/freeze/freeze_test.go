package freeze_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// fixture is a property with a signed and an unsigned inventory of two
// rooms of two items with a photo each, written as the import writes them.
type fixture struct {
	client           *ent.Client
	ctx              context.Context // unrestricted: the most a writer can be
	company          uuid.UUID
	property         uuid.UUID
	material         uuid.UUID
	signed, unsigned *records.Inventory
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st := testdb.Open(t)
	f := &fixture{client: st.Client, ctx: tenant.Unrestricted(context.Background(), "test: freeze fixtures"), company: uuid.New()}
	p, err := f.client.Property.Create().SetCompanyID(f.company).SetAddress("Calle 1").SetCity("Cali").SetPropertyType("Casa").Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.client.Material.Create().SetName("Madera " + uuid.NewString()[:8]).Save(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.property, f.material = p.ID, m.ID
	f.signed = f.write(t, true)
	f.unsigned = f.write(t, false)
	return f
}

// tree is an inventory of the fixture's property, signed or not.
func (f *fixture) tree(signed bool) *records.Inventory {
	inv := &records.Inventory{ID: uuid.New(), CompanyID: f.company, PropertyID: f.property, Type: inventorytype.Colocacion,
		RentalPrice: decimal.RequireFromString("1500000"), Currency: "COP", CreatedAt: time.Now().UTC()}
	if signed {
		code, at := "APR-1", time.Now().UTC()
		inv.Signature = records.Signature{Signed: true, ApprovalCode: &code, Date: &at, Agent: &at, Owner: &at}
	}
	for e := range 2 {
		env := records.Environment{Name: "Sala", Level: 1, Order: e}
		for i := range 2 {
			// Every photo's digest is recorded but the last one's.
			var digest *string
			if e+i < 2 {
				digest = new(strings.Repeat("c", 64))
			}
			env.Items = append(env.Items, records.Item{Name: "Piso", MaterialID: f.material, Rating: 4,
				Photos: []records.Photo{{StorageReference: uuid.NewString() + ".jpg", SHA256: digest}}, Order: &i})
		}
		inv.Environments = append(inv.Environments, env)
	}
	records.DeriveIDs(inv)
	return inv
}

// write writes a tree in one transaction, as the import and the generator
// do: a signed inventory's tree is written in the transaction that creates it.
func (f *fixture) write(t *testing.T, signed bool) *records.Inventory {
	t.Helper()
	inv := f.tree(signed)
	if err := f.inTx(func(tx *ent.Tx) error {
		b := records.Batch{Inventories: []*ent.InventoryCreate{records.NewInventory(tx.Client(), inv)}}
		b.AddTree(tx.Client(), inv)
		return b.Save(f.ctx, tx.Client())
	}); err != nil {
		t.Fatalf("writing a tree (signed %v) in one transaction: %v", signed, err)
	}
	return inv
}

func (f *fixture) inTx(write func(*ent.Tx) error) error {
	tx, err := f.client.Tx(f.ctx)
	if err != nil {
		return err
	}
	if err := write(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// stored is inv's tree as stored now.
func (f *fixture) stored(t *testing.T, id uuid.UUID) *records.Inventory {
	t.Helper()
	inv, err := f.client.Inventory.Query().Where(inventory.ID(id)).
		WithEnvironments(func(q *ent.EnvironmentQuery) { q.WithItems(func(q *ent.ItemQuery) { q.WithPhotos() }) }).Only(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return records.FromEnt(inv)
}

// writes are every kind of direct ent write to an inventory's tree.
func writes(f *fixture, inv *records.Inventory) map[string]func(context.Context, *ent.Client) error {
	env, it := inv.Environments[0], inv.Environments[0].Items[0]
	ph := it.Photos[0]
	c := f.company
	return map[string]func(context.Context, *ent.Client) error{
		"update the inventory": func(ctx context.Context, cl *ent.Client) error {
			return cl.Inventory.UpdateOneID(inv.ID).SetRentalPrice(decimal.RequireFromString("1")).Exec(ctx)
		},
		"update inventories by predicate": func(ctx context.Context, cl *ent.Client) error {
			return cl.Inventory.Update().Where(inventory.PropertyID(f.property), inventory.ID(inv.ID)).SetCurrency("USD").Exec(ctx)
		},
		"unsign the inventory": func(ctx context.Context, cl *ent.Client) error {
			return cl.Inventory.UpdateOneID(inv.ID).SetIsSigned(false).ClearApprovalCode().ClearSignatureDate().Exec(ctx)
		},
		"add an environment": func(ctx context.Context, cl *ent.Client) error {
			return cl.Environment.Create().SetCompanyID(c).SetInventoryID(inv.ID).SetName("Patio").Exec(ctx)
		},
		"rename an environment": func(ctx context.Context, cl *ent.Client) error {
			return cl.Environment.UpdateOneID(env.ID).SetName("Comedor").Exec(ctx)
		},
		"delete the environments": func(ctx context.Context, cl *ent.Client) error {
			_, err := cl.Environment.Delete().Where(environment.InventoryID(inv.ID)).Exec(ctx)
			return err
		},
		"add an item": func(ctx context.Context, cl *ent.Client) error {
			return cl.Item.Create().SetCompanyID(c).SetEnvironmentID(env.ID).SetMaterialID(f.material).SetName("Puerta").SetRating(3).Exec(ctx)
		},
		"rate an item": func(ctx context.Context, cl *ent.Client) error {
			return cl.Item.UpdateOneID(it.ID).SetRating(1).Exec(ctx)
		},
		"rate items by predicate": func(ctx context.Context, cl *ent.Client) error {
			return cl.Item.Update().Where(item.EnvironmentID(env.ID)).SetToRepair(true).Exec(ctx)
		},
		"delete an item": func(ctx context.Context, cl *ent.Client) error {
			return cl.Item.DeleteOneID(it.ID).Exec(ctx)
		},
		"add a photo": func(ctx context.Context, cl *ent.Client) error {
			return cl.Photo.Create().SetCompanyID(c).SetItemID(it.ID).SetStorageReference(uuid.NewString() + ".jpg").Exec(ctx)
		},
		"change a photo's digest": func(ctx context.Context, cl *ent.Client) error {
			return cl.Photo.UpdateOneID(ph.ID).SetSha256(strings.Repeat("a", 64)).Exec(ctx)
		},
		"delete a photo": func(ctx context.Context, cl *ent.Client) error {
			return cl.Photo.DeleteOneID(ph.ID).Exec(ctx)
		},
		"delete the inventory": func(ctx context.Context, cl *ent.Client) error {
			return cl.Inventory.DeleteOneID(inv.ID).Exec(ctx)
		},
		"delete the property": func(ctx context.Context, cl *ent.Client) error {
			return cl.Property.DeleteOneID(f.property).Exec(ctx)
		},
	}
}

// No ent write changes a signed inventory, its environments, items or
// photos, nor deletes its property, with or without a transaction, even
// through an unrestricted context: CONFLICT, saying to make a new inventory.
func TestTheHookRefusesEveryDirectWriteToASignedInventory(t *testing.T) {
	f := newFixture(t)
	before := f.stored(t, f.signed.ID)
	for name, write := range writes(f, f.signed) {
		for _, inTx := range []bool{false, true} {
			var err error
			if inTx {
				err = f.inTx(func(tx *ent.Tx) error { return write(f.ctx, tx.Client()) })
			} else {
				err = write(f.ctx, f.client)
			}
			ae, ok := errors.AsType[*apperr.Error](err)
			if !ok || ae.Code != apperr.Conflict || !strings.Contains(ae.Message, "make a new inventory") || !strings.Contains(ae.Message, f.signed.ID.String()) {
				t.Errorf("%s (in a transaction: %v): got %v, want CONFLICT naming the inventory and saying to make a new one", name, inTx, err)
			}
		}
	}
	if after := f.stored(t, f.signed.ID); !records.SameRecord(before, after) {
		t.Errorf("the signed inventory changed:\nbefore %+v\nafter  %+v", before, after)
	}
}

// The same writes go through on an unsigned inventory, in and out of a
// transaction: the freeze refuses nothing else.
func TestUnsignedInventoriesTakeEveryWrite(t *testing.T) {
	for _, inTx := range []bool{false, true} {
		f := newFixture(t)
		for name, write := range writes(f, f.unsigned) {
			if name == "delete the property" {
				continue // it has a signed inventory
			}
			var err error
			if inTx {
				err = f.inTx(func(tx *ent.Tx) error { return write(f.ctx, tx.Client()) })
			} else {
				err = write(f.ctx, f.client)
			}
			// Some writes find their rows gone after an earlier delete: not
			// found, or refused by the database's foreign key.
			if err != nil && !ent.IsNotFound(err) && !ent.IsConstraintError(err) {
				t.Errorf("%s (in a transaction: %v): %v", name, inTx, err)
			}
		}
	}
}

// Recording the digest of a signed inventory's PDF where none is recorded
// (A2's first request), or of a photo, goes through; replacing a recorded
// one does not.
func TestMissingDigestsAreRecordedOnce(t *testing.T) {
	f := newFixture(t)
	record := func(sum string) error {
		return f.client.Inventory.Update().Where(inventory.ID(f.signed.ID), inventory.PdfSha256IsNil()).SetPdfSha256(sum).Exec(f.ctx)
	}
	if err := record(strings.Repeat("a", 64)); err != nil {
		t.Fatalf("recording the PDF's digest: %v", err)
	}
	err := f.client.Inventory.UpdateOneID(f.signed.ID).SetPdfSha256(strings.Repeat("b", 64)).Exec(f.ctx)
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("replacing the PDF's digest: got %v, want CONFLICT", err)
	}
	unrecorded := f.signed.Environments[1].Items[1].Photos[0].ID
	if err := f.client.Photo.UpdateOneID(unrecorded).SetSha256(strings.Repeat("d", 64)).Exec(f.ctx); err != nil {
		t.Errorf("recording a photo's digest: %v", err)
	}
	if err := f.client.Photo.UpdateOneID(unrecorded).SetSha256(strings.Repeat("e", 64)).Exec(f.ctx); apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("replacing a photo's digest: got %v, want CONFLICT", err)
	}
	inv := f.stored(t, f.signed.ID)
	if inv.Signature.PDFSha256 == nil || *inv.Signature.PDFSha256 != strings.Repeat("a", 64) {
		t.Errorf("PDF digest: got %v, want the first one recorded", inv.Signature.PDFSha256)
	}
	if d := inv.Environments[1].Items[1].Photos[0].SHA256; d == nil || *d != strings.Repeat("d", 64) {
		t.Errorf("photo digest: got %v, want the first one recorded", d)
	}
}

// An operator's correction (freeze.Correct) goes through and is one audit
// line once committed; rolled back, it is none.
func TestACorrectionIsAuditedWhenItCommits(t *testing.T) {
	f := newFixture(t)
	var audit apitest.LogBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(audit.Logger(slog.LevelInfo))
	correct := freeze.Correct(f.ctx, f.signed.ID, "test: a correction")

	tx, err := f.client.Tx(correct)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Item.UpdateOneID(f.signed.Environments[0].Items[0].ID).SetRating(2).Exec(correct); err != nil {
		t.Fatalf("a correction: %v", err)
	}
	if lines := audit.Take(t); len(lines) != 0 {
		t.Errorf("audit lines before the commit: %v", lines)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if lines := audit.Take(t); len(lines) != 0 {
		t.Errorf("audit lines of a correction rolled back: %v", lines)
	}

	err = f.inTx(func(tx *ent.Tx) error {
		if err := tx.Item.UpdateOneID(f.signed.Environments[0].Items[0].ID).SetRating(2).Exec(correct); err != nil {
			return err
		}
		return tx.Environment.UpdateOneID(f.signed.Environments[1].ID).SetName("Estudio").Exec(correct)
	})
	if err != nil {
		t.Fatalf("a correction: %v", err)
	}
	lines := audit.Take(t)
	if len(lines) != 1 || lines[0]["inventory"] != f.signed.ID.String() || lines[0]["reason"] != "test: a correction" {
		t.Errorf("audit lines of a committed correction: %v; want one naming the inventory and the reason", lines)
	}
	if got := f.stored(t, f.signed.ID); got.Environments[0].Items[0].Rating != 2 && got.Environments[1].Items[0].Rating != 2 {
		t.Errorf("the correction was not written: %+v", got.Environments)
	}
	// The grant names one inventory: another signed one stays frozen.
	other := f.write(t, true)
	err = f.client.Item.UpdateOneID(other.Environments[0].Items[0].ID).SetRating(2).Exec(correct)
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("another signed inventory under the grant: got %v, want CONFLICT", err)
	}
}

// A transaction that creates a signed inventory writes its tree (the import
// and the generator do); the next one may not add to it.
func TestASignedTreeIsWrittenInTheTransactionThatCreatesIt(t *testing.T) {
	f := newFixture(t)
	if got := f.stored(t, f.signed.ID); !records.SameContent(got, f.signed) {
		t.Fatalf("the signed tree written: %+v", got)
	}
	err := f.inTx(func(tx *ent.Tx) error {
		return tx.Environment.Create().SetCompanyID(f.company).SetInventoryID(f.signed.ID).SetName("Patio").Exec(f.ctx)
	})
	if apperr.CodeOf(err) != apperr.Conflict {
		t.Errorf("adding to it in a later transaction: got %v, want CONFLICT", err)
	}
}

// A check and its write are two statements: the check holds the inventory
// until the write's transaction ends, so that a signature cannot land
// between them (PostgreSQL: FOR UPDATE; SQLite runs one writer at a time).
func TestASignatureWaitsForAWriteChecked(t *testing.T) {
	f := newFixture(t)
	tx, err := f.client.Tx(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Item.UpdateOneID(f.unsigned.Environments[0].Items[0].ID).SetRating(1).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	signed := make(chan error, 1)
	go func() {
		now := time.Now().UTC()
		signed <- f.client.Inventory.UpdateOneID(f.unsigned.ID).SetIsSigned(true).SetApprovalCode("APR-2").SetSignatureDate(now).Exec(f.ctx)
	}()
	select {
	case err := <-signed:
		t.Fatalf("the signature went in while a checked write was open: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-signed; err != nil {
		t.Fatalf("the signature after the write: %v", err)
	}
	got := f.stored(t, f.unsigned.ID)
	if !got.Signature.Signed || got.Environments[0].Items[0].Rating != 1 {
		t.Errorf("after the write and the signature: signed %v, rating %d; want both", got.Signature.Signed, got.Environments[0].Items[0].Rating)
	}
}
