package schema

import (
	"context"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	gen "github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/intercept"
	"github.com/propertyrecords/inventory/internal/freeze"
)

// Environment is a room or area of the property in one inventory.
type Environment struct{ ent.Schema }

func (Environment) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Environment) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("inventory_id", uuid.UUID{}).Immutable().Comment("The id of the inventory it belongs to."),
		field.String("name").NotEmpty().MaxRuneLen(MaxNameRunes).Comment("Name of the room or area (Sala, Cocina)."),
		field.Text("description").Default("").Validate(maxRunes(MaxDescriptionRunes)).Comment("Free comment; may be empty; at most 2000 characters."),
		field.Int("level").Default(1).Min(1).
			Comment("Level (storey) of the house where the environment is, from 1."),
		field.Int("order").Default(0).NonNegative().
			Comment("Position of the environment in the inventory."),
	}
}

func (Environment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("inventory", Inventory.Type).Ref("environments").Field("inventory_id").
			Unique().Required().Immutable().Comment("The inventory it belongs to."),
		edge.To("items", Item.Type).Comment("The items diagnosed in it, in their order.").
			Annotations(entsql.OnDelete(entsql.Cascade), itemsPerEnvironment),
	}
}

func (Environment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("inventory_id", "order")}
}

// Hooks: no write changes the tree of a signed inventory (internal/freeze).
func (Environment) Hooks() []ent.Hook { return []ent.Hook{freeze.Environments()} }

// Interceptors return environments in inventory order wherever they are
// loaded, including eager loads, since GraphQL lists them without an orderBy.
func (Environment) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraverseEnvironment(func(_ context.Context, q *gen.EnvironmentQuery) error {
			if defaultOrder(q) {
				q.Order(environment.ByOrder(), environment.ByID())
			}
			return nil
		}),
	}
}

func (Environment) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A room or area of an inventoried property (the legacy EnvironmentDiagnostics)."),
		entsql.Checks(map[string]string{"environment_level_positive": "(level >= 1)"}),
		entgql.Skip(entgql.SkipWhereInput),
	}
}
