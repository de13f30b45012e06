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

// defaultOrder reports whether the ordering interceptors give q their
// default order: when it asks for rows and has no order of its own.
//   - A query whose fields leave out the id is a grouped aggregate (a nested
//     connection's totalCount, counted per parent), which PostgreSQL refuses
//     to order by a column it does not group by.
//   - Connections and pages order by their field and the id, an order of
//     their own that the default would only follow with terms that change
//     nothing and keep the database from reading the rows off an index in
//     order.
func defaultOrder(q interface {
	SelectedFields() []string
	Ordered() bool
}) bool {
	fields := q.SelectedFields()
	return (len(fields) == 0 || slices.Contains(fields, "id")) && !q.Ordered()
}

// nowUTC is the default of creation timestamps: stored times are always UTC.
func nowUTC() time.Time { return time.Now().UTC() }
