package schema

import (
	"context"

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
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/storageref"
)

// Photo is a photo of an item, kept in blob storage under its storage reference.
type Photo struct{ ent.Schema }

func (Photo) Mixin() []ent.Mixin { return []ent.Mixin{CompanyMixin{}} }

func (Photo) Fields() []ent.Field {
	return []ent.Field{
		idField(),
		field.UUID("item_id", uuid.UUID{}).Immutable().Comment("The id of the item it shows."),
		field.String("storage_reference").Validate(storageref.Check).Comment("File name of the photo in storage, ending in an image extension."),
		field.String("sha256").Optional().Nillable().Match(sha256Hex).
			Comment("SHA-256 (hex) of the stored file, recorded when it was stored."),
	}
}

func (Photo) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("item", Item.Type).Ref("photos").Field("item_id").
			Unique().Required().Immutable().Comment("The item it shows."),
	}
}

// Indexes: a storage reference names one file of the whole store, so it
// belongs to one photo only; otherwise a company could reach another's file
// through a photo record of its own.
func (Photo) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("item_id", "storage_reference"),
		index.Fields("storage_reference").Unique(),
	}
}

// Hooks: no write changes the tree of a signed inventory (internal/freeze).
func (Photo) Hooks() []ent.Hook { return []ent.Hook{freeze.Photos()} }

// Interceptors return photos in a stable order wherever they are loaded.
func (Photo) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraversePhoto(func(_ context.Context, q *gen.PhotoQuery) error {
			if defaultOrder(q) {
				q.Order(photo.ByStorageReference(), photo.ByID())
			}
			return nil
		}),
	}
}

func (Photo) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A photo of an item."),
		entgql.Skip(entgql.SkipWhereInput),
	}
}
