package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/tenant"
)

// CompanyTally is how many inventories and properties a company has, kept by
// the database's own triggers in the transaction of every insert and delete
// (internal/migrations, internal/store), whoever writes: the API, the import,
// the bulk loads. A connection over a company's whole table reads its
// totalCount here instead of counting the company's rows again for every
// page (ent/template/page_rows.tmpl, schema.Tallied).
type CompanyTally struct{ ent.Schema }

func (CompanyTally) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Immutable().Comment("The company's UUID."),
		field.Int64("inventories").Default(0).Comment("The company's number of inventories."),
		field.Int64("properties").Default(0).Comment("The company's number of properties."),
	}
}

// Policy: a company reads its own row, as it reads its own records (the same
// company from the request, tenant.CompanyFrom); nothing writes it through
// ent.
func (CompanyTally) Policy() ent.Policy { return tenant.OwnRowPolicy() }

func (CompanyTally) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A company's numbers of rows, kept by triggers: its inventories and its properties."),
		entgql.Skip(entgql.SkipAll),
		entsql.Annotation{Table: "company_tallies"},
	}
}

// Tallied marks a company-owned type whose rows a company's CompanyTally
// counts in Field (a CompanyTally field): a connection over all of the
// company's rows reads its totalCount there.
type Tallied struct {
	Field string
}

// Name implements schema.Annotation.
func (Tallied) Name() string { return "Tallied" }
