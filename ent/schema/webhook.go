package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/webhooks/attempt"
)

// WebhookEndpoint is a company's receiver of its record events
// (internal/webhooks): each event of a kind it subscribes to, while it is
// enabled, becomes a WebhookDelivery in the event's own transaction.
// GraphQL reaches it through internal/webhooks (graph/webhooks.graphql),
// never through entgql: its secrets are never read back.
type WebhookEndpoint struct{ ent.Schema }

func (WebhookEndpoint) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.String("url").MaxLen(MaxWebhookURLBytes).Comment("Where the events are POSTed (https, unless INVENTORY_WEBHOOKS_ALLOW_PRIVATE=on)."),
		field.Strings("events").Comment("The event kinds it is sent (records' event kinds, as GraphQL's WebhookEventKind spells them)."),
		field.String("description").Default("").MaxRuneLen(MaxWebhookDescriptionRunes),
		field.Bool("enabled").Default(true).Comment("Whether events are delivered to it; a 410 Gone answer turns it off."),
		field.String("disabled_reason").Optional().Nillable().Comment("Why it was turned off by the service (410 Gone); absent when enabled, or turned off by its company."),
		// The secrets sign the deliveries, so they are kept as they are
		// (a hash could not sign); they are shown once, at creation or
		// rotation, and never read back through the API.
		field.String("secret").Sensitive().Comment("The signing secret, whsec_ and base64 of its bytes."),
		field.String("previous_secret").Optional().Nillable().Sensitive().Comment("The secret before the last rotation, which also signs until previous_secret_expires_at."),
		field.Time("previous_secret_expires_at").Optional().Nillable().Comment("When the previous secret stops signing (UTC)."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When it was made (UTC)."),
		field.Time("updated_at").Default(nowUTC).UpdateDefault(nowUTC).Comment("When it last changed (UTC)."),
	}
}

// Indexes: a company's endpoints are listed, and found for each event.
func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at")}
}

func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A company's receiver of its record events."),
		entgql.Skip(entgql.SkipAll),
	}
}

// Bounds of an endpoint's text.
const (
	MaxWebhookURLBytes         = 2048
	MaxWebhookDescriptionRunes = 500
)

// WebhookDelivery is one event to one endpoint: made in the event's
// transaction with the durable job that sends it, and sent until a 2xx
// answer, a 410, or the job's last attempt. Its id is the webhook-id every
// attempt carries (the receiver's key to drop a second copy).
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("endpoint_id", uuid.UUID{}).Immutable().Comment("The endpoint it is sent to."),
		field.Int64("event_id").Immutable().Comment("The record event's id: the cursor of inventoryEvents."),
		field.String("event_kind").Immutable().Comment("The event's kind, as GraphQL's WebhookEventKind spells it."),
		field.UUID("inventory_id", uuid.UUID{}).Immutable().Comment("The inventory written."),
		field.Int("version").Optional().Nillable().Immutable().Comment("The inventory's version after the write, where it changed."),
		field.Text("payload").Immutable().Comment("The JSON body sent, the same at every attempt."),
		field.Enum("status").NamedValues("Pending", "PENDING", "Delivered", "DELIVERED", "Failed", "FAILED", "Cancelled", "CANCELLED").Default("PENDING").
			Comment("PENDING until a 2xx answer (DELIVERED), a 410 or the last attempt (FAILED), or its endpoint turned off (CANCELLED); spelled as GraphQL's WebhookDeliveryStatus."),
		field.JSON("attempts", []attempt.Attempt{}).Optional().Comment("Each attempt, oldest first (the last attempt.MaxKept)."),
		field.Time("created_at").Default(nowUTC).Immutable().Comment("When the event committed (UTC)."),
		field.Time("updated_at").Default(nowUTC).UpdateDefault(nowUTC).Comment("When its status or attempts last changed (UTC)."),
	}
}

// Indexes: an endpoint's deliveries are listed newest first.
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{index.Fields("endpoint_id", "created_at", "id")}
}

func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One record event sent to one webhook endpoint, with its attempts."),
		entgql.Skip(entgql.SkipAll),
	}
}
