package schema

import (
	"context"
	"regexp"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	gen "github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/intercept"
	"github.com/propertyrecords/inventory/ent/photo"
)

// StorageReferencePattern is a plain file name with an image extension: no
// directory part, so a reference can never point outside the photo store.
var StorageReferencePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(?i:jpe?g|png|webp|gif|heic)$`)

// Photo is a photo of an item, kept in blob storage under its storage reference.
type Photo struct{ ent.Schema }

func (Photo) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Photo) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("item_id", uuid.UUID{}).Immutable(),
		field.String("storage_reference").Match(StorageReferencePattern),
	}
}

func (Photo) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("item", Item.Type).Ref("photos").Field("item_id").
			Unique().Required().Immutable(),
	}
}

func (Photo) Indexes() []ent.Index {
	return []ent.Index{index.Fields("item_id", "storage_reference")}
}

// Interceptors return photos in a stable order wherever they are loaded.
func (Photo) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraversePhoto(func(_ context.Context, q *gen.PhotoQuery) error {
			q.Order(photo.ByStorageReference(), photo.ByID())
			return nil
		}),
	}
}

func (Photo) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipWhereInput)}
}
