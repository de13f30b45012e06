package schema

import (
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
	return field.UUID("id", uuid.UUID{}).Default(uuid.New).Immutable()
}

// nowUTC is the default of creation timestamps: stored times are always UTC.
func nowUTC() time.Time { return time.Now().UTC() }
