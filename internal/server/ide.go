package server

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/internal/compare"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/store"
)

// ideExamples finds the records of ctx's company that the IDE's example
// tabs open on: two inventories of one property to compare, and a property
// and a material to make an inventory of. What it cannot find stays zero.
func ideExamples(ctx context.Context, st *store.Store, log *slog.Logger) ide.Examples {
	var ex ide.Examples
	from, to, ok, err := compare.FirstPair(ctx, st.Client)
	if err != nil {
		log.Warn("the IDE's comparison example found no inventories", "error", err)
	}
	if ok {
		ex.From, ex.To = from, to
	}
	if id, err := st.Client.Property.Query().FirstID(ctx); err == nil {
		ex.Property = id
	}
	if it, err := st.Client.Item.Query().Where(item.HasMaterial()).WithMaterial().First(ctx); err == nil && it.Edges.Material != nil {
		ex.Material = it.Edges.Material.ID
	}
	if ms, err := st.Client.Material.Query().Where(material.NameIn(ide.FloorMaterial, ide.WindowMaterial)).All(ctx); err == nil {
		ex.Materials = map[string]uuid.UUID{}
		for _, m := range ms {
			ex.Materials[m.Name] = m.ID
		}
	}
	return ex
}
