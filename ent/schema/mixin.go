package schema

import (
	"slices"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/tenant"
)

// CompanyMixin marks a schema as owned by a company. Every owned table carries
// company_id itself (copied from its property when written), so the tenancy
// filter is one indexed equality per table instead of a chain of joins.
type CompanyMixin struct{ mixin.Schema }

func (CompanyMixin) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("company_id", uuid.UUID{}).Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (CompanyMixin) Policy() ent.Policy { return tenant.Policy() }

// idField is the UUID primary key every schema uses.
func idField() ent.Field {
	return field.UUID("id", uuid.UUID{}).Default(uuid.New).Immutable().
		Comment("The record's UUID: its id in GraphQL (node) and in the legacy REST endpoints alike.")
}

// selectsRows reports whether a query with these selected fields asks for
// rows, which the ordering interceptors order. One that leaves out the id is
// a grouped aggregate (a nested connection's totalCount, counted per parent),
// which PostgreSQL refuses to order by a column it does not group by.
func selectsRows(fields []string) bool {
	return len(fields) == 0 || slices.Contains(fields, "id")
}

// nowUTC is the default of creation timestamps: stored times are always UTC.
func nowUTC() time.Time { return time.Now().UTC() }
