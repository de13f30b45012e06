package graph_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// embeddedHeading opens the README's list of the object types that have no
// id, which a normalized cache must store inside their parent (graphcache:
// keys: { T: () => null }). .ci/graphcache-clients reads the same list.
const embeddedHeading = "### Objects without an id"

// readmeEmbeddedTypes is the README's list of embedded object types: the
// names in backquotes that open the list items under embeddedHeading.
func readmeEmbeddedTypes(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(readme), "\n"+embeddedHeading)
	if !found {
		t.Fatalf("the README has no section %q", embeddedHeading)
	}
	item := regexp.MustCompile("^- `([A-Za-z_][A-Za-z0-9_]*)`")
	var names []string
	for line := range strings.Lines(section) {
		if m := item.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		} else if len(names) > 0 && !strings.HasPrefix(line, "  ") { // past the list and its items' continued lines
			break
		} else if strings.HasPrefix(line, "#") {
			break
		}
	}
	if len(names) == 0 {
		t.Fatalf("the README's section %q lists no type", embeddedHeading)
	}
	return names
}

// Every object type an answer can hold has `id: ID!`, the key Apollo
// Client's InMemoryCache and urql's graphcache read without configuration,
// or is one of the README's embedded types (value objects: pages, edges,
// summaries, payloads), which a front end declares so. A type in the list
// that has an id, or that does not exist, is a stale list.
// .ci/graphcache-clients runs the IDE's documents and the README's examples
// through graphcache with that list and fails on any warning.
func TestEveryObjectHasAnIDOrIsListedAsEmbedded(t *testing.T) {
	type field struct {
		Name string
		Type struct {
			Kind   string
			OfType *struct{ Kind, Name string }
		}
	}
	srv := apitest.NewServer(t, testdb.Open(t), nil)
	var schema struct {
		Schema struct {
			QueryType, MutationType, SubscriptionType struct{ Name string }
			Types                                     []struct {
				Kind, Name string
				Fields     []field
			}
		} `json:"__schema"`
	}
	srv.MustData(t, companyA, `{ __schema {
		queryType { name } mutationType { name } subscriptionType { name }
		types { kind name fields(includeDeprecated: true) { name type { kind ofType { kind name } } } } } }`, nil, &schema)
	s := schema.Schema
	roots := []string{s.QueryType.Name, s.MutationType.Name, s.SubscriptionType.Name}
	hasID := map[string]bool{} // every object type, whether it has id: ID!
	for _, typ := range s.Types {
		if typ.Kind != "OBJECT" || strings.HasPrefix(typ.Name, "__") || slices.Contains(roots, typ.Name) {
			continue
		}
		hasID[typ.Name] = slices.ContainsFunc(typ.Fields, func(f field) bool {
			return f.Name == "id" && f.Type.Kind == "NON_NULL" && f.Type.OfType != nil && f.Type.OfType.Name == "ID"
		})
	}
	embedded := readmeEmbeddedTypes(t)
	for _, name := range slices.Sorted(maps.Keys(hasID)) {
		if !hasID[name] && !slices.Contains(embedded, name) {
			t.Errorf("%s has no id: ID! and is not in the README's %q: give it an id if it is an entity, or list it there", name, embeddedHeading)
		}
	}
	for _, name := range embedded {
		known, ok := hasID[name]
		switch {
		case !ok:
			t.Errorf("the README's %q names %s, which is no object type of the schema", embeddedHeading, name)
		case known:
			t.Errorf("the README's %q names %s, which has id: ID!: drop it from the list (graphcache would not key it)", embeddedHeading, name)
		}
	}
	if len(embedded) != len(slices.Compact(slices.Sorted(slices.Values(embedded)))) {
		t.Errorf("the README's %q names a type twice: %v", embeddedHeading, embedded)
	}
}
