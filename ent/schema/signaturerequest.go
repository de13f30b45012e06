package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// SignatureRequest is a link sent to one party to sign one inventory
// (requestSignature): good for one signature, until it expires, is
// cancelled or replaced, or the inventory's content changes. Only the
// SHA-256 of the link's token is kept, so that the table read does not
// sign anything; its id is derived from that hash (records.linkID), so that
// the lookup without a company names the record it reads in its audit
// line. Written by internal/records alone; not in GraphQL.
type SignatureRequest struct{ ent.Schema }

func (SignatureRequest) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (SignatureRequest) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Immutable().Comment("Derived from token_hash."),
		field.UUID("inventory_id", uuid.UUID{}).Immutable().Comment("The inventory to sign."),
		field.Enum("party").Values("AGENT", "OWNER", "TENANT").Immutable().Comment("Who signs from the link."),
		field.String("signer_name").NotEmpty().MaxRuneLen(MaxSignerNameRunes).Immutable().
			Comment("Who the link was sent to: the name the page suggests."),
		field.String("token_hash").Match(sha256Hex).Unique().Immutable().Sensitive().
			Comment("SHA-256 (hex) of the link's token."),
		field.Int("inventory_version").Immutable().Comment("The inventory's version the link was issued for."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the link was issued (UTC)."),
		field.Time("expires_at").Immutable().Comment("When the link stops working (UTC)."),
		field.String("requested_by").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).Immutable().
			Comment("The credential's name that asked for the link; absent in header mode."),
		field.Time("cancelled_at").Optional().Nillable().
			Comment("When the link was cancelled, or replaced by a new one for the same party."),
		// The evidence of the signature made from the link.
		field.Time("used_at").Optional().Nillable().Comment("When the party signed from the link (UTC)."),
		field.String("signed_name").Optional().Nillable().MaxRuneLen(MaxSignerNameRunes).
			Comment("The name the signer typed."),
		field.String("client_address").Optional().Nillable().MaxLen(64).
			Comment("The signer's address: the connection's, or X-Forwarded-For's from a trusted proxy."),
		field.String("user_agent").Optional().Nillable().MaxRuneLen(MaxUserAgentRunes).
			Comment("The signer's browser, as it said (cut to its bound)."),
		field.String("consent_version").Optional().Nillable().MaxLen(32).
			Comment("The version of the consent text the signer accepted."),
	}
}

// MaxUserAgentRunes bounds the user agent kept as evidence: a client may
// send one of any length.
const MaxUserAgentRunes = 512

// Indexes: the links of an inventory's party, to replace them.
func (SignatureRequest) Indexes() []ent.Index {
	return []ent.Index{index.Fields("inventory_id", "party")}
}

func (SignatureRequest) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A link sent to one party to sign one inventory; only its token's hash is kept."),
		entgql.Skip(entgql.SkipAll),
	}
}
