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

// Company is a management company's own particulars: today its name, which
// both PDFs print at their top. Its id is the company's UUID, the one every
// record's company_id holds; a company has a row once it is named (by
// `inventoryd company` or an import), and records never wait for it.
type Company struct{ ent.Schema }

func (Company) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Immutable().
			Comment("The company's UUID: the X-Company-Id its callers send."),
		field.String("name").NotEmpty().MaxRuneLen(MaxCompanyNameRunes).
			Comment("The company's name, as its reports print it."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the company was first named (UTC)."),
		field.Time("updated_at").Default(nowUTC).UpdateDefault(nowUTC).Comment("When its name was last set (UTC)."),
	}
}

// Policy: a company reads its own row only (its id is its company), and no
// caller of the API writes it: `inventoryd company` and the import do, as
// the operator (tenant.Unrestricted).
func (Company) Policy() ent.Policy { return tenant.OwnRowPolicy() }

func (Company) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A management company's particulars: its name."),
		// GraphQL's Company (company.graphql) is written by hand as the
		// webhooks' types are: one root field reads the caller's own, and it
		// is no Node (no other company's id can be asked for).
		entgql.Skip(entgql.SkipAll),
		entsql.Annotation{Table: "companies"},
	}
}
