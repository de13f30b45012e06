package graph

import (
	"maps"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// publicSchema is the schema as clients see it (introspection, and the
// operations they send are validated against it): the service's schema
// without gqlgen's own directives (@goField, @goModel, …), which tell gqlgen
// how to bind Go code and mean nothing to a client. They are declared in
// graph/ent.graphql for gqlgen; a client that printed the introspected
// schema got their definitions. @listSize stays: it states each list's
// bounds, which clients and the cost check read alike.
func publicSchema() *ast.Schema {
	public := *parsedSchema
	public.Directives = maps.Clone(parsedSchema.Directives)
	for name := range public.Directives {
		if gqlgenDirective(name) {
			delete(public.Directives, name)
		}
	}
	return &public
}

// gqlgenDirective reports whether a directive is one of gqlgen's code
// generation directives (goField, goModel, goTag, goExtraField, goEnum).
func gqlgenDirective(name string) bool {
	return strings.HasPrefix(name, "go") && len(name) > 2 && 'A' <= name[2] && name[2] <= 'Z'
}
