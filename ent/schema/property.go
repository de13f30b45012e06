package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/propertyrecords/inventory/internal/freeze"
)

// Property is a registered building or unit that belongs to a company.
type Property struct{ ent.Schema }

func (Property) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Property) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.String("code").Default("").MaxRuneLen(MaxCodeRunes).
			Comment("The company's own reference for the property; may be empty.").
			Annotations(entgql.OrderField("CODE")),
		field.String("address").NotEmpty().MaxRuneLen(MaxAddressRunes).Comment("Street address."),
		field.String("neighborhood").Default("").MaxRuneLen(MaxNameRunes).Comment("Neighbourhood (barrio); may be empty."),
		field.String("city").NotEmpty().MaxRuneLen(MaxNameRunes).Comment("City.").
			Annotations(entgql.OrderField("CITY")),
		field.String("property_type").NotEmpty().MaxRuneLen(MaxCodeRunes).
			Comment("Type name, e.g. Apartamento or Casa (the legacy PropertyType.typeName)."),
		field.Bool("is_active").Default(true).Comment("Whether the company still manages the property."),
		field.Text("detail").Optional().Nillable().Validate(maxRunes(MaxDescriptionRunes)).
			Comment("Free-text detail of the property; at most 2000 characters."),
		field.Int("levels").Default(1).Range(1, 200).
			Comment("Number of levels (storeys) of the property."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the property was registered (UTC).").
			Annotations(entgql.OrderField("CREATED_AT")),
	}
}

func (Property) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("inventories", Inventory.Type).
			Comment("The property's inventories, newest first unless ordered otherwise.").
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.RelayConnection(), pagedList,
				DefaultOrder{Field: "CREATED_AT", Direction: "DESC"}),
	}
}

// Hooks: deleting a property would delete its inventories with it, signed
// ones included (the database cascades, below ent's hooks).
func (Property) Hooks() []ent.Hook { return []ent.Hook{freeze.Properties()} }

func (Property) Indexes() []ent.Index {
	return []ent.Index{
		// Each order of a page, with the id that breaks its ties (see Inventory).
		index.Fields("company_id", "id"), // a connection without orderBy
		index.Fields("company_id", "created_at", "id"),
		index.Fields("company_id", "city", "id"),
		index.Fields("company_id", "code", "id"),
	}
}

func (Property) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A registered building or unit of a company, which can have several inventories."),
		entgql.QueryField().Description("The company's properties, a Relay connection: filter with where, order with orderBy, page with first and after."),
		entgql.RelayConnection(),
		Tallied{Field: "Properties"},
	}
}
