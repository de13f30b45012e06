package graph_test

import (
	"sort"
	"strings"
	"testing"
)

// Every type, field, argument, enum value and input field of the schema
// says what it is: front-end tools (GraphiQL's docs, Apollo's and Relay's
// generated types) show these descriptions, and a name alone ("levels",
// "propertyIDNotIn") leaves the reader to guess.
func TestEverySchemaElementHasADescription(t *testing.T) {
	srv, _ := demo(t)
	type arg struct{ Name, Description string }
	var schema struct {
		Schema struct {
			Types []struct {
				Kind, Name, Description string
				Fields                  []struct {
					Name, Description string
					Args              []arg
				}
				InputFields []arg
				EnumValues  []arg
			}
		} `json:"__schema"`
	}
	srv.MustData(t, "", `{ __schema { types { kind name description
		fields(includeDeprecated: true) { name description args { name description } }
		inputFields { name description }
		enumValues(includeDeprecated: true) { name description } } } }`, nil, &schema)
	var missing []string
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	for _, typ := range schema.Schema.Types {
		if strings.HasPrefix(typ.Name, "__") {
			continue // GraphQL's own introspection types
		}
		if blank(typ.Description) {
			missing = append(missing, typ.Name)
		}
		for _, f := range typ.Fields {
			if blank(f.Description) {
				missing = append(missing, typ.Name+"."+f.Name)
			}
			for _, a := range f.Args {
				if blank(a.Description) {
					missing = append(missing, typ.Name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
		for _, f := range typ.InputFields {
			if blank(f.Description) {
				missing = append(missing, typ.Name+"."+f.Name)
			}
		}
		for _, v := range typ.EnumValues {
			if blank(v.Description) {
				missing = append(missing, typ.Name+"."+v.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d schema elements have no description:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
