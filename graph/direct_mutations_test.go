package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/direct"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Mutations run on the direct executor too. Each write below is made on two
// databases of the same records, answered by the direct executor on one and
// by gqlgen's on the other: the answers are the same bytes, errors
// included, but for the times the writes were made at.
func TestDirectExecutorAnswersMutationsAsGqlgenDoes(t *testing.T) {
	onDirect, onGqlgen := newDifferential(t), newDifferential(t)
	tree := treeInput(t, onDirect)
	for _, step := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"a whole tree created", `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { ` + everyWrittenField + ` } }`,
			map[string]any{"input": tree}},
		{"the tree changed", `mutation($input: UpdateInventoryInput!) { updateInventory(input: $input) { ` + everyWrittenField + ` } }`,
			map[string]any{"input": map[string]any{"id": tree["id"], "expectedVersion": 1, "rentalPrice": "2000000",
				"environments": tree["environments"].([]any)[:2]}}},
		{"a stale version refused", `mutation($input: UpdateInventoryInput!) { updateInventory(input: $input) { inventory { id version } } }`,
			map[string]any{"input": map[string]any{"id": tree["id"], "expectedVersion": 1, "rentalPrice": "1"}}},
		{"an invalid tree refused", `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id } } }`,
			map[string]any{"input": map[string]any{"propertyId": tree["propertyId"], "inventoryType": "COLOCACION", "rentalPrice": "-1"}}},
		{"two writes under aliases", `mutation($a: CreateInventoryInput!, $b: CreateInventoryInput!) {
			first: createInventory(input: $a) { inventory { id version environments { name } } }
			again: createInventory(input: $a) { inventory { id version } }
			second: createInventory(input: $b) { __typename inventory { id currency } } }`,
			map[string]any{"a": treeInput(t, onDirect), "b": map[string]any{"id": uuid.NewString(), "propertyId": tree["propertyId"],
				"inventoryType": "CAPTACION", "rentalPrice": "900000"}}},
	} {
		t.Run(step.name, func(t *testing.T) {
			got, gotErrs := onDirect.mutate(t, true, step.query, step.vars)
			want, wantErrs := onGqlgen.mutate(t, false, step.query, step.vars)
			if got != want || gotErrs != wantErrs {
				t.Errorf("answers differ\n direct: %s %s\n gqlgen: %s %s", got, gotErrs, want, wantErrs)
			}
		})
	}
}

// A mutation the direct executor ran and then gave up (as it does on a
// panic) is answered by gqlgen's from what the write returned: it is not
// written a second time, which for this update would be refused as stale.
func TestAWriteRunsOnceWhenGqlgensExecutorAnswersAfterTheDirectOne(t *testing.T) {
	d := newDifferential(t)
	tree := treeInput(t, d)
	d.mutate(t, true, `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id } } }`, map[string]any{"input": tree})

	update := `mutation($input: UpdateInventoryInput!) { updateInventory(input: $input) { inventory { id version rentalPrice } } }`
	vars := map[string]any{"input": map[string]any{"id": tree["id"], "expectedVersion": 1, "rentalPrice": "1234"}}
	once := direct.WithOnce(d.ctx)
	ctx, opCtx := d.operation(t, once, update, vars)
	first, _, err := d.exec.runDirect(ctx, opCtx)
	if err != nil {
		t.Fatal(err)
	}
	ctx, opCtx = d.operation(t, once, update, vars)
	responses, ctx := d.exec.Executor.DispatchOperation(ctx, opCtx)
	again := responses(ctx)
	if len(again.Errors) > 0 || string(again.Data) != string(first) {
		t.Errorf("gqlgen's answer after the direct executor's: %s %v, want the write's own answer %s", again.Data, again.Errors, first)
	}
	if string(first) != `{"updateInventory":{"inventory":{"id":"`+tree["id"].(string)+`","version":2,"rentalPrice":"1234.00"}}}` {
		t.Errorf("the update answered %s, want version 2", first)
	}
}

// everyWrittenField is what a front end asks of a write: the inventory's
// own fields, its property, and its whole tree.
const everyWrittenField = `inventory { id version createdAt updatedAt isSigned inventoryType inventoryTypeName rentalPrice deposit currency
	property { id code address city } environments { id name description level order
	items { id name rating toRepair description order material { id name } photos { id storageReference } } } }`

// treeInput is a createInventory input of three rooms of four items, every
// id given: the same records on every database.
func treeInput(t *testing.T, d *differential) map[string]any {
	t.Helper()
	p, err := d.exec.schema.Resolvers.(*Resolver).client.Property.Query().Where(property.LevelsGTE(2)).Order(property.ByID()).First(d.ctx)
	if err != nil {
		t.Fatal(err)
	}
	materials, err := d.exec.schema.Resolvers.(*Resolver).client.Material.Query().IDs(tenant.Unrestricted(d.ctx, "test: the materials"))
	if err != nil || len(materials) < 3 {
		t.Fatalf("materials: %v, %v", materials, err)
	}
	rooms := []any{}
	for e := range 3 {
		items := []any{}
		for i := range 4 {
			items = append(items, map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Ventana %d", i+1),
				"materialId": materials[i%len(materials)].String(), "rating": 1 + (e+i)%5, "order": i})
		}
		rooms = append(rooms, map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Habitación %d", e+1), "level": 1 + e%2, "items": items})
	}
	return map[string]any{"id": uuid.NewString(), "propertyId": p.ID.String(), "inventoryType": "COLOCACION",
		"rentalPrice": "1850000.50", "environments": rooms}
}

// writeTimes matches the times a write stamps (createdAt, updatedAt).
var writeTimes = regexp.MustCompile(`"(createdAt|updatedAt)":"[^"]+"`)

// mutate runs a mutation on the direct executor or on gqlgen's, and gives
// its data and errors as JSON, the write's times blanked.
func (d *differential) mutate(t *testing.T, onDirect bool, query string, vars map[string]any) (data, errs string) {
	t.Helper()
	ctx, opCtx := d.operation(t, d.ctx, query, vars)
	var errList any
	if onDirect {
		b, list, err := d.exec.runDirect(ctx, opCtx)
		if err != nil {
			t.Fatalf("the direct executor gave the mutation up: %v", err)
		}
		data, errList = string(b), list
	} else {
		responses, ctx := d.exec.Executor.DispatchOperation(ctx, opCtx)
		res := responses(ctx)
		data, errList = string(res.Data), res.Errors
	}
	e, err := json.Marshal(errList)
	if err != nil {
		t.Fatal(err)
	}
	return writeTimes.ReplaceAllString(data, `"$1":"T"`), string(e)
}

// operation is query's operation context, on ctx.
func (d *differential) operation(t *testing.T, ctx context.Context, query string, vars map[string]any) (context.Context, *graphql.OperationContext) {
	t.Helper()
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := d.exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
	if errs != nil {
		t.Fatalf("%v\n%s", errs, query)
	}
	return ctx, opCtx
}
