package graph_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// wholeInventory selects every field of an inventory and of its tree, the
// lists twice under other aliases and bounds, and the previous inventory,
// which is read.
const wholeInventory = `id propertyId inventoryType inventoryTypeCode inventoryTypeName rentalPrice deposit currency isSigned
	isRemoteSigned approvalCode createdAt signatureDate agentSignatureDate ownerSignatureDate version updatedAt agentSignerName
	agentSignedRemotely ownerSignerName ownerSignedRemotely tenantSignatureDate tenantSignerName tenantSignedRemotely pdfUrl
	requiredSignatures signatures { party } previous { id } property { id code address levels }
	environments { id inventoryId name description level order
		items { id environmentId materialId name description rating order toRepair material { id name }
			photos { id storageReference } } }
	firstRoom: environments(first: 1) { name ...roomItems }`

const roomItems = `fragment roomItems on Environment { firstItems: items(first: 2) { name material { name } snaps: photos { id } } }`

// TestCreateInventoryAnswersWhatAReadReturns: the inventory createInventory
// answers from what it wrote (without reading it back) is, byte for byte,
// what a query of the same selection returns right after, for trees with
// materials made before the server started and after, optional fields given
// and absent, photos asked (a new item has none), and no rooms at all; and
// it reads none of the tree back. A tree a read would order by its items'
// names, and a selection of the edges back up the tree, are read back, and
// answer the same.
func TestCreateInventoryAnswersWhatAReadReturns(t *testing.T) {
	counter := testdb.Counter{InTransactions: true}
	w := newWrites(t, counter.Option())
	made, err := w.st.Client.Material.Create().SetName("Material hecho después").Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	newMaterial := made.ID.String()

	full := w.tree("", 3, 4)
	full["deposit"] = "3700000.10"
	full["currency"] = "USD"
	full["requiredSignatures"] = []string{"TENANT", "AGENT"}
	full["environments"].([]any)[1].(map[string]any)["items"].([]any)[2].(map[string]any)["materialId"] = newMaterial

	bare := map[string]any{"propertyId": w.property, "inventoryType": "DESOCUPACION", "rentalPrice": "0", "environments": []any{
		map[string]any{"name": "Sala", "items": []any{map[string]any{"name": "Puerta", "materialId": newMaterial, "rating": 3}}},
		map[string]any{"name": "Cocina", "level": 2, "items": []any{}},
		map[string]any{"name": "Baño", "items": []any{
			map[string]any{"name": "Lavamanos", "materialId": w.materials[0], "rating": 5, "order": 2},
			map[string]any{"name": "Espejo", "materialId": w.materials[1], "rating": 4, "order": 1},
			map[string]any{"name": "Ducha", "materialId": w.materials[1], "rating": 1, "toRepair": true}}}}}

	byName := map[string]any{"propertyId": w.property, "inventoryType": "DESOCUPACION", "rentalPrice": "12.5", "environments": []any{
		map[string]any{"name": "Sala", "items": []any{
			map[string]any{"name": "Ventana", "materialId": w.materials[0], "rating": 3},
			map[string]any{"name": "Puerta", "materialId": newMaterial, "rating": 2}}}}}

	// The edges back up the tree are read, as the read reads them.
	backUp := `environments { inventory { id } items { environment { name } } }`
	for _, tc := range []struct {
		name      string
		input     map[string]any
		selection string
		readBack  bool
	}{
		{"every field given, a material made after the start", full, wholeInventory, false},
		{"optional fields absent, unordered items and an empty room", bare, wholeInventory, false},
		{"no rooms", map[string]any{"propertyId": w.property, "inventoryType": "DESOCUPACION", "rentalPrice": "1"}, wholeInventory, false},
		{"items a read orders by name", byName, wholeInventory, true},
		{"the edges back up the tree", w.tree("", 2, 3), wholeInventory + " " + backUp, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.input["id"] = uuid.NewString()
			counter.Reset()
			res := w.srv.GraphQL(t, companyA, `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { `+
				tc.selection+` } } } `+roomItems, map[string]any{"input": tc.input})
			_, _, quoted := counter.Find(`FROM "environments"`)
			_, _, backquoted := counter.Find("FROM `environments`")
			readEnvironments := quoted || backquoted
			if len(res.Errors) > 0 {
				t.Fatalf("createInventory: %v", res.Errors)
			}
			var answered struct {
				CreateInventory struct{ Inventory json.RawMessage } `json:"createInventory"`
			}
			if err := json.Unmarshal(res.Data, &answered); err != nil {
				t.Fatal(err)
			}
			read := w.srv.GraphQL(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { `+tc.selection+` } } } `+roomItems,
				map[string]any{"id": tc.input["id"]})
			var got struct{ Node json.RawMessage }
			if err := json.Unmarshal(read.Data, &got); len(read.Errors) > 0 || err != nil {
				t.Fatalf("reading it: %v %v", read.Errors, err)
			}
			if string(answered.CreateInventory.Inventory) != string(got.Node) {
				t.Errorf("createInventory answered\n%s\na read returns\n%s", answered.CreateInventory.Inventory, got.Node)
			}
			if readEnvironments != tc.readBack {
				t.Errorf("createInventory read the environments back: %v, want %v", readEnvironments, tc.readBack)
			}
		})
	}
}
