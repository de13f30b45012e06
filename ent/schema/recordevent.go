package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// RecordEvent is one accepted write of an inventory, written in the write's
// own transaction by internal/records (and by an import that corrects a
// signed inventory): the property's timeline reads the changes the record
// itself does not keep (updates, photos, corrections), and its increasing
// id orders every write of a company for whoever follows them. Never
// changed once written.
type RecordEvent struct{ ent.Schema }

func (RecordEvent) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (RecordEvent) Fields() []ent.Field {
	return []ent.Field{
		// An increasing number, not a UUID: the order writes committed in
		// (one writer at a time on SQLite; on PostgreSQL, the order ids
		// were drawn, which a reader allows for).
		field.Int64("id").Immutable(),
		field.Time("at").Default(nowUTC).Immutable().Comment("When the write happened (UTC)."),
		field.Enum("kind").Immutable().
			Values("inventory_created", "inventory_updated", "photo_added", "photo_removed",
				"agent_signed", "owner_signed", "tenant_signed", "fully_signed", "pdf_stored", "inventory_corrected",
				"signature_requested").
			Comment("What the write did."),
		field.UUID("property_id", uuid.UUID{}).Immutable().Comment("The property of the inventory written."),
		field.UUID("inventory_id", uuid.UUID{}).Immutable().Comment("The inventory written."),
		field.UUID("item_id", uuid.UUID{}).Optional().Nillable().Immutable().Comment("The item, for a photo's write."),
		field.UUID("photo_id", uuid.UUID{}).Optional().Nillable().Immutable().Comment("The photo, for a photo's write."),
		field.Int("version").Optional().Nillable().Immutable().Comment("The inventory's version after the write, where it changed."),
		field.String("actor").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).Immutable().
			Comment("Who wrote: the credential's name (an API key's name, a token's subject), or the command; absent when the caller has no name (header mode)."),
	}
}

// Indexes: a property's timeline and an inventory's history read by id
// within one of them; a company's writes are followed by id.
func (RecordEvent) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("property_id", "id"),
		index.Fields("inventory_id", "id"),
		index.Fields("company_id", "id"),
	}
}

func (RecordEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One accepted write of an inventory: what, when, by whom."),
		entgql.Skip(entgql.SkipAll),
	}
}
