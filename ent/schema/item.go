package schema

import (
	"context"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	gen "github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/intercept"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/internal/freeze"
)

// Rating bounds of an item's condition: 1 (bad) to 5 (as new).
const (
	MinRating = 1
	MaxRating = 5
)

// Item is one diagnosed item of an environment (the legacy "item diagnostic").
type Item struct{ ent.Schema }

func (Item) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Item) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("environment_id", uuid.UUID{}).Immutable().Comment("The id of the environment it is in."),
		field.UUID("material_id", uuid.UUID{}).Comment("The id of its material."),
		field.String("name").NotEmpty().MaxRuneLen(MaxNameRunes).Comment("Name of the item (Puerta, Ventana).").
			Annotations(entgql.OrderField("NAME")),
		field.Text("description").Default("").Validate(maxRunes(MaxDescriptionRunes)).Comment("Free comment; may be empty; at most 2000 characters."),
		field.Int("rating").Range(MinRating, MaxRating).
			Comment("Condition from 1 (bad) to 5 (as new).").
			Annotations(entgql.OrderField("RATING")),
		field.Int("order").Optional().Nillable().NonNegative().Comment("Position in the environment; absent when the inspector gave none."),
		field.Bool("to_repair").Default(false).Comment("Whether the item needs repair."),
	}
}

func (Item) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("environment", Environment.Type).Ref("items").Field("environment_id").
			Unique().Required().Immutable().Comment("The environment it is in."),
		edge.From("material", Material.Type).Ref("items").Field("material_id").
			Unique().Required().Comment("What it is made of."),
		edge.To("photos", Photo.Type).Comment("Its photos; empty when it has none.").
			Annotations(entsql.OnDelete(entsql.Cascade), photosPerItem),
	}
}

func (Item) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("environment_id", "order"),
		index.Fields("material_id"),
	}
}

// Hooks: no write changes the tree of a signed inventory (internal/freeze).
func (Item) Hooks() []ent.Hook { return []ent.Hook{freeze.Items()} }

// Interceptors return items in their order (unordered items last) wherever
// they are loaded, including eager loads.
func (Item) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraverseItem(func(_ context.Context, q *gen.ItemQuery) error {
			if defaultOrder(q) {
				q.Order(item.ByOrder(sql.OrderNullsLast()), item.ByName(), item.ByID())
			}
			return nil
		}),
	}
}

func (Item) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One item diagnosed in an environment: its condition, material, photos and whether it needs repair (the legacy ItemDiagnostic)."),
		entsql.Checks(map[string]string{"item_rating_range": "(rating BETWEEN 1 AND 5)"}),
		// A material's items are a connection (Material.items), filtered and
		// ordered like the root ones.
		entgql.RelayConnection(),
	}
}
