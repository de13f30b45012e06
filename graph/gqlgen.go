//go:build ignore

// gqlgen generates graph/generated.go from the schema in graph/*.graphql, as
// `gqlgen generate` does, and with it the direct executor
// (graph/direct_generated.go, see internal/direct). Run through
// `go generate ./...` from the module root, after ent's step.
package main

import (
	"log"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/propertyrecords/inventory/internal/direct/directgen"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		log.Fatalf("loading gqlgen.yml: %v", err)
	}
	// Writers of the schema's own scalars for the direct executor: each writes
	// what its gqlgen marshaler writes (internal/scalar), without allocating.
	scalars := map[string]string{
		"Time time.Time": "x.w.Set(scalar.AppendTime(x.w.Bytes(), v))",
		"Decimal github.com/shopspring/decimal.Decimal":                                  "x.w.Set(scalar.AppendDecimal(x.w.Bytes(), v))",
		"InventoryType github.com/propertyrecords/inventory/internal/inventorytype.Type": "v.MarshalGQL(x.w)",
	}
	direct := directgen.New("graph/direct_generated.go", scalars, "github.com/propertyrecords/inventory/internal/scalar",
		"github.com/propertyrecords/inventory/internal/tracing")
	direct.ListSpan = "tracing.Resolver"
	if err := api.Generate(cfg, api.AddPlugin(direct)); err != nil {
		log.Fatalf("running gqlgen: %v", err)
	}
}
