//go:build ignore

// gqlgen generates graph/generated.go from the schema in graph/*.graphql, as
// `gqlgen generate` does, and with it the direct executor
// (graph/direct_generated.go, see internal/direct). Run through
// `go generate ./...` from the module root, after ent's step.
package main

import (
	"fmt"
	"log"
	"os"
	"strings"

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
	direct.Cached = map[string]string{"Inventory.environments": "keptTree"}
	if err := api.Generate(cfg, api.AddPlugin(direct)); err != nil {
		log.Fatalf("running gqlgen: %v", err)
	}
	if err := leaveDeferredFieldsOut(cfg.Exec.Filename); err != nil {
		log.Fatalf("%s: %v", cfg.Exec.Filename, err)
	}
}

// leaveDeferredFieldsOut makes the generated object marshalers leave the
// fields they defer out of the payload before them, where gqlgen writes them
// as null (see graph/deferred.go): each concurrent field goes through
// resolveConcurrently, which marks the deferred ones, and an object that
// deferred any is written by withoutDeferred. gqlgen has no hook for either,
// so the generated code is rewritten, and generation fails if it no longer
// has the shape rewritten (once per object marshaler).
func leaveDeferredFieldsOut(path string) error {
	code, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src := string(code)
	const (
		call     = "out.ResolveConcurrently(ec.OperationContext, &deferred, i,"
		ours     = "resolveConcurrently(out, field, ec.OperationContext, &deferred, i,"
		group    = "deferred := graphql.NewDeferredGroup(ctx)"
		written  = "\t\tec.ProcessDeferredGroup(deferred)\n\t}\n\n\treturn out\n}"
		leaveOut = "\t\tec.ProcessDeferredGroup(deferred)\n\t\treturn withoutDeferred(fields, out)\n\t}\n\n\treturn out\n}"
	)
	objects := strings.Count(src, group)
	if strings.Count(src, call) == 0 || strings.Count(src, written) != objects {
		return fmt.Errorf("gqlgen's object marshalers no longer have the shape leaveDeferredFieldsOut rewrites (%d objects)", objects)
	}
	src = strings.ReplaceAll(src, call, ours)
	src = strings.ReplaceAll(src, written, leaveOut)
	return os.WriteFile(path, []byte(src), 0o644)
}
