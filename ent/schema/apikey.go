package schema

import (
	"regexp"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// APIKey is a credential that names one company (INVENTORY_AUTH=apikey). The
// key itself is shown once, when created; only its SHA-256 is kept. It is
// not a company's record: no GraphQL type, no tenancy policy (the key is
// read before any company is known), written only by internal/auth.
type APIKey struct{ ent.Schema }

func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("company_id", uuid.UUID{}).Immutable().Comment("The company the key acts for."),
		field.String("name").NotEmpty().MaxLen(100).Match(regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)).
			Unique().Immutable().Comment("Who the key was given to, unique: it names the caller in audit lines."),
		field.String("hash").Match(sha256Hex).Unique().Immutable().Sensitive().
			Comment("SHA-256 (hex) of the key."),
		field.Enum("scope").Values("read", "write").Default("read").Immutable().
			Comment("What the key may do: read, or read and write. Keys made before scopes read only."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the key was created (UTC)."),
		field.Time("last_used_at").Optional().Nillable().Comment("When the key was last used, to the minute (UTC)."),
		field.Time("revoked_at").Optional().Nillable().Comment("When the key was revoked; a revoked key is refused."),
	}
}

func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id")}
}

func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A credential of one company; only its hash is kept."),
		entgql.Skip(entgql.SkipAll),
	}
}
