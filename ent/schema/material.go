package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// Material is a shared catalogue entry (Madera, Cerámica, ...). It holds no
// company data, so it is not company-owned; the items it leads to are.
type Material struct{ ent.Schema }

func (Material) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.String("name").NotEmpty().MaxRuneLen(MaxNameRunes).Unique().Comment("Name of the material (Madera, Cerámica)."),
	}
}

func (Material) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("items", Item.Type).Comment("Items made of it, of the caller's company, a Relay connection.").Annotations(entgql.RelayConnection(), pagedList),
	}
}

func (Material) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A material of the shared catalogue that items are made of."),
		entgql.Skip(entgql.SkipWhereInput),
		Catalogue{InsertOnly: true},
	}
}

// Catalogue marks a type whose rows are shared by every company and only
// ever inserted: never changed nor removed. Eager loads of it are answered
// from the client's catalogue cache (ent/template/catalogue.tmpl).
type Catalogue struct {
	// InsertOnly is always true: the annotation exists to say so (and a
	// template tests an empty annotation as absent).
	InsertOnly bool
}

// Name implements schema.Annotation.
func (Catalogue) Name() string { return "Catalogue" }
