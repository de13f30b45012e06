package paging

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// ReadPageForPageInfo returns ctx for entgql's Paginate so that a connection
// asked for its pageInfo but not its edges still reads its page: entgql
// skips the page when no edges are selected, and answered null cursors and a
// hasNextPage that only said the list was not empty, so that a client paging
// with pageInfo alone could not go on. Paginate is shown the field with an
// empty edges selection added: it reads the page's rows, and eager-loads
// nothing for them, since no node is asked for.
func ReadPageForPageInfo(ctx context.Context) context.Context {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return ctx
	}
	var pageInfo, edges bool
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		switch f.Name {
		case "pageInfo":
			pageInfo = true
		case "edges":
			edges = true
		}
	}
	if !pageInfo || edges {
		return ctx
	}
	field := *fc.Field.Field
	field.SelectionSet = append(slices.Clone(fc.Field.Selections), &ast.Field{Alias: "edges", Name: "edges"})
	widened := *fc
	widened.Field = graphql.CollectedField{Field: &field, Selections: field.SelectionSet}
	return graphql.WithFieldContext(ctx, &widened)
}

// Selected reports whether the field of ctx selects a field of this name
// (any alias); true outside a GraphQL operation, where everything is wanted.
func Selected(ctx context.Context, name string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return true
	}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// NodeContext returns ctx as seen from the node of a connection field's
// edges (`edges { node { … } }`), for ent's CollectFields to eager-load what
// the nodes select; false when no node is selected.
func NodeContext(ctx context.Context) (context.Context, bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return ctx, false
	}
	opCtx := graphql.GetOperationContext(ctx)
	for _, edges := range graphql.CollectFields(opCtx, fc.Field.Selections, nil) {
		if edges.Name != "edges" {
			continue
		}
		for _, node := range graphql.CollectFields(opCtx, edges.Selections, nil) {
			if node.Name == "node" {
				return graphql.WithFieldContext(ctx, &graphql.FieldContext{Parent: fc, Object: node.ObjectDefinition.Name, Field: node}), true
			}
		}
	}
	return ctx, false
}
