package schema

import (
	"context"
	"regexp"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	gen "github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/hook"
	"github.com/propertyrecords/inventory/ent/intercept"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/drawing"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/inventorytype"
)

// Inventory is a signed (or yet unsigned) record of the tangible assets in a property.
type Inventory struct{ ent.Schema }

func (Inventory) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Inventory) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("property_id", uuid.UUID{}).Immutable().Comment("The id of the inventoried property."),
		field.Int("inventory_type").GoType(inventorytype.Type(0)).Validate(inventorytype.Validate).
			Comment("What the inventory is for: intake, placement, pre-visit or vacating.").
			Annotations(entgql.Type("InventoryType"), entgql.OrderField("INVENTORY_TYPE")),
		// numeric in both databases: exact in PostgreSQL; SQLite keeps 15
		// significant digits, which the write path enforces (see docs/decisions.md).
		field.Other("rental_price", decimal.Decimal{}).
			Comment("Monthly rental price, an exact decimal with two places, in currency.").
			SchemaType(map[string]string{dialect.Postgres: "numeric(15,2)", dialect.SQLite: "numeric"}).
			Annotations(entgql.Type("Decimal"), entgql.OrderField("RENTAL_PRICE"), entgql.Skip(entgql.SkipWhereInput)),
		// Optional: inventories made before it was kept, and those of no
		// tenancy (a pre-visit), have none.
		field.Other("deposit", decimal.Decimal{}).Optional().Nillable().
			Comment("The security deposit the tenant paid, an exact decimal with two places, in currency; absent when none was recorded.").
			SchemaType(map[string]string{dialect.Postgres: "numeric(15,2)", dialect.SQLite: "numeric"}).
			Annotations(entgql.Type("Decimal"), entgql.Skip(entgql.SkipWhereInput)),
		field.String("currency").Default("COP").Match(regexp.MustCompile(`^[A-Z]{3}$`)).
			Comment("ISO 4217 code of rental_price."),
		field.Bool("is_signed").Default(false).Comment("Whether both parties signed; a signed inventory has a signed PDF."),
		field.Bool("is_remote_signed").Default(false).Comment("Whether it was signed remotely."),
		field.String("approval_code").Optional().Nillable().MaxRuneLen(MaxCodeRunes).
			Comment("Set when signed, absent otherwise."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the inventory was created (UTC).").
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("signature_date").Optional().Nillable().
			Comment("When the inventory became signed (both parties); absent while unsigned."),
		// Cursor paging cannot step across NULLs, so ordering by signature date
		// reads these copies, kept by the hook below: the signature date, or
		// while unsigned a sentinel that sorts last, at the far end of each
		// direction (see DescendingSort).
		field.Time("signature_sort_date").Default(func() time.Time { return UnsignedSortDate }).
			Annotations(entgql.Skip(entgql.SkipType, entgql.SkipWhereInput), entgql.OrderField("SIGNATURE_DATE"),
				DescendingSort{Column: "signature_sort_date_desc"}),
		// The database default lets a database of the version before it add
		// the column; the migrations then copy the dates of signed inventories.
		field.Time("signature_sort_date_desc").Default(func() time.Time { return UnsignedSortDateDesc }).
			Annotations(entgql.Skip(entgql.SkipAll), entsql.Default("'0001-01-01 00:00:00+00:00'")),
		field.Time("agent_signature_date").Optional().Nillable().Comment("When the agent signed; absent until then."),
		field.String("pdf_sha256").Optional().Nillable().Match(sha256Hex).
			Comment("SHA-256 (hex) of the signed PDF, recorded when it was stored.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Time("owner_signature_date").Optional().Nillable().Comment("When the owner signed; absent until then."),
		// Kept by the hook below, whoever writes: the token of optimistic
		// concurrency (updateInventory's expectedVersion), and when.
		field.Int("version").Default(1).Positive().
			Comment("Starts at 1 and grows by one with every change of the inventory: send it back as updateInventory's expectedVersion, so that a change made meanwhile is not lost.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Time("updated_at").Optional().Nillable().
			Comment("When the inventory was last written (UTC): created, changed or signed; absent for inventories written before it was kept.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		// Who signed for each party and how, kept by signInventory: the
		// report prints the names on the signature lines, and the flags let
		// is_remote_signed be set once both have signed (the CHECK below
		// refuses it on an unsigned inventory).
		field.String("agent_signer_name").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Comment("Who signed for the agent; absent until then, and on inventories signed before the API recorded it.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Bool("agent_signed_remotely").Default(false).
			Comment("Whether the agent signed remotely.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.String("owner_signer_name").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Comment("Who signed for the owner; absent until then, and on inventories signed before the API recorded it.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Bool("owner_signed_remotely").Default(false).
			Comment("Whether the owner signed remotely.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		// The tenant signs as the agent and the owner do, where the
		// inventory requires it (a move-in or move-out settles a deposit
		// with the tenant).
		field.Time("tenant_signature_date").Optional().Nillable().Comment("When the tenant signed; absent until then.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.String("tenant_signer_name").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Comment("Who signed for the tenant; absent until then.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		field.Bool("tenant_signed_remotely").Default(false).
			Comment("Whether the tenant signed remotely.").
			Annotations(entgql.Skip(entgql.SkipWhereInput)),
		// Which parties make the inventory signed once all have: a list
		// of SignatureParty names, comma-separated, in the order AGENT,
		// OWNER, TENANT (Inventory.requiredSignatures reads it). The
		// database default keeps the meaning of inventories made before.
		field.String("required_signatures").Default(DefaultRequiredSignatures).Match(requiredSignatures).
			Annotations(entgql.Skip(entgql.SkipAll)),
		// How each party signed: the name of the credential that sent the
		// signature (an API key's name, a token's subject); absent for a
		// caller without a name (header mode) and for imported signatures.
		field.String("agent_signed_with").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("owner_signed_with").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("tenant_signed_with").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Annotations(entgql.Skip(entgql.SkipAll)),
		// The parties who signed from a link (requestSignature) rather than
		// through the API: comma-separated, in the order AGENT, OWNER,
		// TENANT. Its own column, not a credential's name in *_signed_with,
		// which an API key or a token's subject could spell alike.
		field.String("signed_by_link").Default("").Match(signedByLink).
			Annotations(entgql.Skip(entgql.SkipAll)),
		// What each party signed: the SHA-256 of the inventory's PDF as it
		// stood when they signed (the draft a link's page offered, or the
		// one rendered for a signature through the API), which the signed
		// PDF's certificate states; absent for imported signatures.
		field.String("agent_signed_document").Optional().Nillable().Match(sha256Hex).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("owner_signed_document").Optional().Nillable().Match(sha256Hex).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("tenant_signed_document").Optional().Nillable().Match(sha256Hex).
			Annotations(entgql.Skip(entgql.SkipAll)),
		// Each party's drawn signature, where they drew one (internal/drawing's
		// text), drawn on their line of the PDF.
		field.Text("agent_signature_drawing").Optional().Nillable().MaxLen(drawing.MaxBytes).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.Text("owner_signature_drawing").Optional().Nillable().MaxLen(drawing.MaxBytes).
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.Text("tenant_signature_drawing").Optional().Nillable().MaxLen(drawing.MaxBytes).
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

// DefaultRequiredSignatures is who must sign an inventory unless its maker
// says otherwise: the agent and the owner, as before the tenant could sign.
const DefaultRequiredSignatures = "AGENT,OWNER"

// requiredSignatures is a non-empty list of distinct parties, in order.
var requiredSignatures = regexp.MustCompile(`^(AGENT(,OWNER)?(,TENANT)?|OWNER(,TENANT)?|TENANT)$`)

// signedByLink is a list, possibly empty, of distinct parties, in order.
var signedByLink = regexp.MustCompile(`^(AGENT(,OWNER)?(,TENANT)?|OWNER(,TENANT)?|TENANT)?$`)

// sha256Hex is a SHA-256 digest in lowercase hex.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// The signature sort dates of unsigned inventories: after every signature
// date ascending, before every one descending.
var (
	UnsignedSortDate     = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	UnsignedSortDateDesc = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Hooks: no write changes a signed inventory (internal/freeze), and the
// signature sort dates, the version and updated_at follow every write,
// whoever writes. The freeze check comes first, so that it sees the
// mutation's fields as its writer set them.
func (Inventory) Hooks() []ent.Hook {
	return []ent.Hook{
		freeze.Inventories(),
		hook.On(func(next ent.Mutator) ent.Mutator {
			return hook.InventoryFunc(func(ctx context.Context, m *gen.InventoryMutation) (ent.Value, error) {
				if date, ok := m.SignatureDate(); ok {
					m.SetSignatureSortDate(date)
					m.SetSignatureSortDateDesc(date)
				} else if m.SignatureDateCleared() {
					m.SetSignatureSortDate(UnsignedSortDate)
					m.SetSignatureSortDateDesc(UnsignedSortDateDesc)
				}
				if m.Op().Is(ent.OpCreate) {
					created, _ := m.CreatedAt() // set: defaults come before hooks
					m.SetUpdatedAt(created)
				} else {
					if _, set := m.Version(); !set {
						m.AddVersion(1)
					}
					m.SetUpdatedAt(nowUTC())
				}
				return next.Mutate(ctx, m)
			})
		}, ent.OpCreate|ent.OpUpdate|ent.OpUpdateOne),
	}
}

// Interceptors list inventories newest first wherever they are loaded without
// an order of their own (connections and pages always have one).
func (Inventory) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraverseInventory(func(_ context.Context, q *gen.InventoryQuery) error {
			if defaultOrder(q) {
				q.Order(inventory.ByCreatedAt(sql.OrderDesc()), inventory.ByID())
			}
			return nil
		}),
	}
}

func (Inventory) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("property", Property.Type).Ref("inventories").Field("property_id").
			Unique().Required().Immutable().Comment("The inventoried property."),
		edge.To("environments", Environment.Type).Comment("The rooms or areas, in their order.").
			Annotations(entsql.OnDelete(entsql.Cascade), environmentsPerInventory),
	}
}

func (Inventory) Indexes() []ent.Index {
	return []ent.Index{
		// Every order a page can ask for has an index ending with the id, the
		// tie-break of every order: a page is read off the index in order and
		// stops at its end, and the rows an offset skips are passed over on
		// the index, never sorted (issue 28: B1's last page cost twice its
		// first when created_at alone left the ids to a sort).
		index.Fields("company_id", "id"), // a connection without orderBy
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "signature_sort_date", "id"),
		index.Fields("company_id", "signature_sort_date_desc", "id"),
		index.Fields("company_id", "rental_price", "id"),
		index.Fields("company_id", "inventory_type", "id"),
		index.Fields("property_id", "created_at", "id"),
		// Filters, in the default order (newest first).
		index.Fields("company_id", "signature_date"),
		index.Fields("company_id", "inventory_type", "created_at", "id"),
		index.Fields("company_id", "is_signed", "created_at", "id"),
		index.Fields("company_id", "is_remote_signed", "created_at", "id"),
	}
}

func (Inventory) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A signed (or not yet signed) record of the tangible assets of a property, room by room."),
		entgql.QueryField().Description("The company's inventories, a Relay connection: filter with where, order with orderBy, page with first and after."),
		entgql.RelayConnection(),
		// A signed inventory's environments, and everything below them,
		// never change (internal/freeze): their JSON may be kept
		// (internal/treecache, ent/template/frozen_tree.tmpl).
		FrozenTree{Edge: "Environments", Signed: "IsSigned", Version: "Version"},
		Tallied{Field: "Inventories"},
		// The database itself refuses a half-signed inventory.
		entsql.Checks(map[string]string{
			"inventory_signed_consistent": "((is_signed AND approval_code IS NOT NULL AND signature_date IS NOT NULL)" +
				" OR (NOT is_signed AND NOT is_remote_signed AND approval_code IS NULL AND signature_date IS NULL))",
			"inventory_type_code":     "(inventory_type BETWEEN 0 AND 3)",
			"inventory_price_range":   "(rental_price >= 0 AND rental_price < 10000000000000)",
			"inventory_deposit_range": "(deposit IS NULL OR (deposit >= 0 AND deposit < 10000000000000))",
		}),
	}
}

// FrozenTree marks a type whose tree below Edge (a struct field name) never
// changes while the field Signed is true, except with the field Version: a
// tree cache keys it by id and version (ent/template/frozen_tree.tmpl).
type FrozenTree struct {
	Edge, Signed, Version string
}

// Name implements schema.Annotation.
func (FrozenTree) Name() string { return "FrozenTree" }
