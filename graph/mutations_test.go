package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The selection every mutation test reads back.
const writtenInventory = `inventory { id version updatedAt createdAt isSigned inventoryType rentalPrice currency property { id }
	environments { id name description level order items { id name rating toRepair description order material { id } photos { id storageReference } } } }`

const (
	createMutation = `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { ` + writtenInventory + ` } }`
	updateMutation = `mutation($input: UpdateInventoryInput!) { updateInventory(input: $input) { ` + writtenInventory + ` } }`
)

type written struct {
	ID            string  `json:"id"`
	Version       int     `json:"version"`
	UpdatedAt     *string `json:"updatedAt"`
	CreatedAt     string  `json:"createdAt"`
	IsSigned      bool    `json:"isSigned"`
	InventoryType string  `json:"inventoryType"`
	RentalPrice   string  `json:"rentalPrice"`
	Currency      string  `json:"currency"`
	Property      struct {
		ID string `json:"id"`
	} `json:"property"`
	Environments []writtenEnvironment `json:"environments"`
}

type writtenEnvironment struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Level       int    `json:"level"`
	Order       int    `json:"order"`
	Items       []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Rating      int    `json:"rating"`
		ToRepair    bool   `json:"toRepair"`
		Description string `json:"description"`
		Order       *int   `json:"order"`
		Material    struct {
			ID string `json:"id"`
		} `json:"material"`
		Photos []struct {
			ID               string `json:"id"`
			StorageReference string `json:"storageReference"`
		} `json:"photos"`
	} `json:"items"`
}

// writes is a server on a copy of the demo records, logging to log, with
// what the mutation tests write against.
type writes struct {
	srv *apitest.Server
	st  *store.Store
	log *apitest.LogBuffer
	// property is one of company A's of two levels or more; theirs one of
	// company B's.
	property, theirs string
	levels           int
	materials        []string
}

func newWrites(t testing.TB, opts ...store.Option) *writes {
	t.Helper()
	return newWritesServing(t, func(*store.Store, *server.Options) {}, opts...)
}

// newWritesServing is newWrites with the server's options as configure
// makes them on the copy's store.
func newWritesServing(t testing.TB, configure func(*store.Store, *server.Options), opts ...store.Option) *writes {
	t.Helper()
	st := testdb.DemoRecords.Open(t, opts...)
	w := &writes{st: st, log: &apitest.LogBuffer{}}
	srvOpts := server.Options{Files: apitest.Files(t)}
	configure(st, &srvOpts)
	w.srv = apitest.NewServerLogging(t, st, srvOpts, w.log.Logger(slog.LevelInfo))
	ctx := context.Background()
	p, err := st.Client.Property.Query().Where(property.LevelsGTE(2)).Order(property.ByID()).First(tenant.WithCompany(ctx, datagen.DemoCompanies[0]))
	if err != nil {
		t.Fatal(err)
	}
	q, err := st.Client.Property.Query().Order(property.ByID()).First(tenant.WithCompany(ctx, datagen.DemoCompanies[1]))
	if err != nil {
		t.Fatal(err)
	}
	materials, err := st.Client.Material.Query().IDs(ctx)
	if err != nil || len(materials) < 3 {
		t.Fatalf("materials: %v, %v", materials, err)
	}
	w.property, w.theirs, w.levels = p.ID.String(), q.ID.String(), p.Levels
	for _, m := range materials {
		w.materials = append(w.materials, m.String())
	}
	return w
}

// tree is a createInventory input of envs rooms of items items each.
func (w *writes) tree(id string, envs, items int) map[string]any {
	input := map[string]any{"propertyId": w.property, "inventoryType": "COLOCACION", "rentalPrice": "1850000.50"}
	if id != "" {
		input["id"] = id
	}
	rooms := []any{}
	for e := range envs {
		room := map[string]any{"name": fmt.Sprintf("Habitación %d", e+1), "level": 1 + e%2, "description": "Piso de madera"}
		list := []any{}
		for i := range items {
			rating := 1 + (e+i)%5
			list = append(list, map[string]any{"name": fmt.Sprintf("Ventana %d", i+1), "materialId": w.materials[i%len(w.materials)],
				"rating": rating, "toRepair": rating <= 2, "description": "Vidrio con marco", "order": i})
		}
		room["items"] = list
		rooms = append(rooms, room)
	}
	input["environments"] = rooms
	return input
}

// create sends createInventory as company A.
func (w *writes) create(t testing.TB, input map[string]any) (written, []apitest.Error) {
	t.Helper()
	return w.mutate(t, companyA, createMutation, input, "createInventory")
}

func (w *writes) update(t testing.TB, input map[string]any) (written, []apitest.Error) {
	t.Helper()
	return w.mutate(t, companyA, updateMutation, input, "updateInventory")
}

func (w *writes) mutate(t testing.TB, company, doc string, input map[string]any, field string) (written, []apitest.Error) {
	t.Helper()
	res := w.srv.GraphQL(t, company, doc, map[string]any{"input": input})
	var data map[string]*struct {
		Inventory written `json:"inventory"`
	}
	if len(res.Data) > 0 {
		if err := json.Unmarshal(res.Data, &data); err != nil {
			t.Fatalf("decoding %s: %v", res.Data, err)
		}
	}
	if p := data[field]; p != nil {
		return p.Inventory, res.Errors
	}
	return written{}, res.Errors
}

// count is how many inventories company A has.
func (w *writes) count(t testing.TB) int {
	t.Helper()
	n, err := w.st.Client.Inventory.Query().Count(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateInventoryWritesTheWholeTree(t *testing.T) {
	w := newWrites(t)
	before := w.count(t)
	id := uuid.NewString()
	got, errs := w.create(t, w.tree(id, 3, 4))
	if len(errs) > 0 {
		t.Fatalf("errors: %+v", errs)
	}
	if got.ID != id || got.Version != 1 || got.UpdatedAt == nil || *got.UpdatedAt != got.CreatedAt || got.IsSigned ||
		got.InventoryType != "COLOCACION" || got.RentalPrice != "1850000.50" || got.Currency != "COP" || got.Property.ID != w.property {
		t.Errorf("created: %+v", got)
	}
	if len(got.Environments) != 3 {
		t.Fatalf("environments: got %d, want 3", len(got.Environments))
	}
	for e, env := range got.Environments {
		if env.Name != fmt.Sprintf("Habitación %d", e+1) || env.Order != e || env.Level != 1+e%2 || len(env.Items) != 4 {
			t.Errorf("environment %d: %+v", e, env)
		}
		for i, it := range env.Items {
			rating := 1 + (e+i)%5
			if it.Name != fmt.Sprintf("Ventana %d", i+1) || it.Rating != rating || it.ToRepair != (rating <= 2) ||
				it.Order == nil || *it.Order != i || it.Material.ID != w.materials[i%len(w.materials)] || it.Description != "Vidrio con marco" {
				t.Errorf("environment %d, item %d: %+v", e, i, it)
			}
		}
	}
	if n := w.count(t); n != before+1 {
		t.Errorf("inventories: %d, want %d", n, before+1)
	}
	// An audit line: who, which company, what, which records.
	var audits []map[string]any
	for _, l := range w.log.Take(t) {
		if l["msg"] == "records: inventory created" {
			audits = append(audits, l)
		}
	}
	if len(audits) != 1 || audits[0]["company"] != companyA || audits[0]["inventory"] != id || audits[0]["property"] != w.property ||
		audits[0]["environments"] != 3.0 || audits[0]["items"] != 12.0 || audits[0]["remote_addr"] == nil {
		t.Errorf("audit lines: %v; want one naming the company, the inventory, its size and the caller", audits)
	}
	// A write is priced by the rows it writes, 100 each: here the
	// inventory, 2 rooms and 10 items, and the 3 fields answered.
	res := w.srv.GraphQL(t, companyA, `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id } } }`,
		map[string]any{"input": w.tree(uuid.NewString(), 2, 5)})
	cost, _ := res.Extensions["cost"].(map[string]any)
	if len(res.Errors) > 0 || cost["requestedQueryCost"] != 1303.0 {
		t.Errorf("price of a create of 13 rows: %v (%+v), want 1303", cost, res.Errors)
	}
}

// A phone on a bad network sends the same create again: it answers the
// inventory made the first time and writes nothing, also when the two
// arrive at once; other content under that id is CONFLICT.
func TestCreateInventoryIsIdempotentByID(t *testing.T) {
	w := newWrites(t)
	before := w.count(t)
	id := uuid.NewString()
	first, errs := w.create(t, w.tree(id, 2, 3))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	again, errs := w.create(t, w.tree(id, 2, 3))
	if len(errs) > 0 || again.ID != id || again.Version != 1 || again.Environments[1].Items[2].ID != first.Environments[1].Items[2].ID {
		t.Errorf("sent again: %+v, %+v; want the same inventory", again, errs)
	}
	other := w.tree(id, 2, 3)
	other["rentalPrice"] = "1.00"
	if _, errs := w.create(t, other); len(errs) != 1 || errs[0].Code() != "CONFLICT" || errs[0].Extensions["field"] != "id" {
		t.Errorf("the same id with another price: %+v; want CONFLICT on id", errs)
	}
	moreRooms := w.tree(id, 3, 3)
	if _, errs := w.create(t, moreRooms); len(errs) != 1 || errs[0].Code() != "CONFLICT" {
		t.Errorf("the same id with another room: %+v; want CONFLICT", errs)
	}

	// Both at once: one writes, the other finds it.
	at := uuid.NewString()
	var wg sync.WaitGroup
	results := make([]written, 4)
	failures := make([][]apitest.Error, 4)
	for i := range results {
		wg.Go(func() { results[i], failures[i] = w.create(t, w.tree(at, 2, 3)) })
	}
	wg.Wait()
	for i := range results {
		if len(failures[i]) > 0 || results[i].ID != at {
			t.Errorf("request %d of 4 at once: %+v, %+v", i, results[i].ID, failures[i])
		}
	}
	// Without an id, each request is a new inventory.
	for range 2 {
		if _, errs := w.create(t, w.tree("", 1, 1)); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	if n := w.count(t); n != before+4 {
		t.Errorf("inventories: %d, want %d (two by id, two without)", n, before+4)
	}
}

// Each rule broken is INVALID_ARGUMENT naming the field in the input's
// terms (the import's rules, through the same code), a record that is not
// there or another company's is NOT_FOUND, and nothing is written.
func TestCreateInventoryRefusesNamingTheField(t *testing.T) {
	w := newWrites(t)
	before := w.count(t)
	edit := func(f func(in map[string]any)) map[string]any {
		in := w.tree(uuid.NewString(), 2, 2)
		f(in)
		return in
	}
	env := func(in map[string]any, e int) map[string]any { return in["environments"].([]any)[e].(map[string]any) }
	item := func(in map[string]any, e, i int) map[string]any {
		return env(in, e)["items"].([]any)[i].(map[string]any)
	}
	many := func(v any, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tests := []struct {
		name   string
		input  map[string]any
		code   string
		field  string
		reason string
	}{
		{"rating out of range", edit(func(in map[string]any) { item(in, 1, 0)["rating"] = 6 }), "INVALID_ARGUMENT", "environments[1].items[0].rating", "refused"},
		{"empty room name", edit(func(in map[string]any) { env(in, 0)["name"] = "" }), "INVALID_ARGUMENT", "environments[0].name", "missing"},
		{"item name too long", edit(func(in map[string]any) { item(in, 0, 1)["name"] = strings.Repeat("x", 129) }), "INVALID_ARGUMENT", "environments[0].items[1].name", "129 characters long: at most 128"},
		{"item description too long", edit(func(in map[string]any) { item(in, 1, 1)["description"] = strings.Repeat("x", 900_000) }), "INVALID_ARGUMENT", "environments[1].items[1].description", "900000 characters long: at most 2000"},
		{"room description too long", edit(func(in map[string]any) { env(in, 1)["description"] = strings.Repeat("é", 2001) }), "INVALID_ARGUMENT", "environments[1].description", "2001 characters long: at most 2000"},
		{"level above the property's", edit(func(in map[string]any) { env(in, 1)["level"] = w.levels + 1 }), "INVALID_ARGUMENT", "environments[1].level", "above the property"},
		{"level 0", edit(func(in map[string]any) { env(in, 0)["level"] = 0 }), "INVALID_ARGUMENT", "environments[0].level", "refused"},
		{"negative order", edit(func(in map[string]any) { item(in, 0, 0)["order"] = -1 }), "INVALID_ARGUMENT", "environments[0].items[0].order", "refused"},
		{"price with three places", edit(func(in map[string]any) { in["rentalPrice"] = "1.005" }), "INVALID_ARGUMENT", "rentalPrice", "two decimal places"},
		{"price out of range", edit(func(in map[string]any) { in["rentalPrice"] = "10000000000000" }), "INVALID_ARGUMENT", "rentalPrice", "out of range"},
		{"currency", edit(func(in map[string]any) { in["currency"] = "pesos" }), "INVALID_ARGUMENT", "currency", "refused"},
		{"NUL in a description", edit(func(in map[string]any) { item(in, 1, 1)["description"] = "Roto\x00" }), "INVALID_ARGUMENT", "environments[1].items[1].description", "NUL"},
		{"a room's id twice", edit(func(in map[string]any) {
			id := uuid.NewString()
			env(in, 0)["id"], env(in, 1)["id"] = id, id
		}), "INVALID_ARGUMENT", "environments[1].id", "used twice"},
		{"too many rooms", edit(func(in map[string]any) { in["environments"] = many(env(in, 0), 61) }), "INVALID_ARGUMENT", "environments", "at most 60"},
		{"too many items in a room", edit(func(in map[string]any) { env(in, 0)["items"] = many(item(in, 0, 0), 201) }), "INVALID_ARGUMENT", "environments[0].items", "at most 200"},
		{"too many items in all", edit(func(in map[string]any) {
			room := map[string]any{"name": "Sala", "items": many(item(in, 0, 0), 200)}
			in["environments"] = many(room, 6)
		}), "INVALID_ARGUMENT", "environments", "1200 items in all"},
		{"unknown material", edit(func(in map[string]any) { item(in, 0, 1)["materialId"] = uuid.NewString() }), "NOT_FOUND", "environments[0].items[1].materialId", "not found"},
		{"unknown property", edit(func(in map[string]any) { in["propertyId"] = uuid.NewString() }), "NOT_FOUND", "propertyId", "not found"},
		{"another company's property", edit(func(in map[string]any) { in["propertyId"] = w.theirs }), "NOT_FOUND", "propertyId", "not found"},
		{"a material that is not an id", edit(func(in map[string]any) { item(in, 1, 0)["materialId"] = "madera" }), "INVALID_ARGUMENT", "environments[1].items[0].materialId", "not a UUID"},
		{"a price that is not decimal", edit(func(in map[string]any) { in["rentalPrice"] = "mucho" }), "INVALID_ARGUMENT", "rentalPrice", "not a decimal"},
	}
	for _, tt := range tests {
		_, errs := w.create(t, tt.input)
		if len(errs) != 1 || errs[0].Code() != tt.code || errs[0].Extensions["field"] != tt.field || !strings.Contains(errs[0].Message, tt.reason) {
			t.Errorf("%s: got %+v, want %s on %s saying %q", tt.name, errs, tt.code, tt.field, tt.reason)
		}
	}
	if n := w.count(t); n != before {
		t.Errorf("inventories: %d, want %d: refused writes wrote", n, before)
	}
}

// TestTextsAtTheirBoundsAreTaken: the bounds count characters, not bytes
// (2,000 é are 4,000 bytes), and a text at its bound is written whole.
func TestTextsAtTheirBoundsAreTaken(t *testing.T) {
	w := newWrites(t)
	in := w.tree(uuid.NewString(), 1, 1)
	room := in["environments"].([]any)[0].(map[string]any)
	room["name"] = strings.Repeat("ñ", 128)
	room["description"] = strings.Repeat("é", 2000)
	it := room["items"].([]any)[0].(map[string]any)
	it["description"] = strings.Repeat("ü", 2000)
	got, errs := w.create(t, in)
	if len(errs) > 0 || len(got.Environments) != 1 || len(got.Environments[0].Items) != 1 {
		t.Fatalf("texts at their bounds: %+v, want them taken", errs)
	}
	if e := got.Environments[0]; e.Name != room["name"] || e.Description != room["description"] || e.Items[0].Description != it["description"] {
		t.Errorf("the texts written: %.80q, %.80q, %.80q…, want each whole", e.Name, e.Description, e.Items[0].Description)
	}
}

func TestUpdateInventoryChangesWhatIsGivenAtTheVersionRead(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 2, 2))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": 1, "rentalPrice": "2000000.00"})
	if len(errs) > 0 || got.Version != 2 || got.RentalPrice != "2000000.00" || got.InventoryType != "COLOCACION" ||
		len(got.Environments) != 2 || got.Environments[1].Items[1].ID != made.Environments[1].Items[1].ID {
		t.Errorf("price changed: %+v, %+v; want version 2, the new price and the tree as it was", got, errs)
	}
	if got.UpdatedAt == nil || *got.UpdatedAt <= made.CreatedAt {
		t.Errorf("updatedAt %v after created %s", got.UpdatedAt, made.CreatedAt)
	}
	// Sent again at the version it read: the change made meanwhile (its own)
	// is not written over.
	if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": 1, "currency": "USD"}); len(errs) != 1 ||
		errs[0].Code() != "CONFLICT" || errs[0].Extensions["field"] != "expectedVersion" {
		t.Errorf("a stale version: %+v; want CONFLICT on expectedVersion", errs)
	}
	// The tree replaced: the first room kept by its id and one of its items
	// by its id, the rest new.
	kept := made.Environments[0]
	rooms := []any{
		map[string]any{"id": kept.ID, "name": "Sala comedor", "level": 1, "items": []any{
			map[string]any{"id": kept.Items[1].ID, "name": "Puerta", "materialId": w.materials[0], "rating": 2, "toRepair": true},
			map[string]any{"name": "Lámpara", "materialId": w.materials[1], "rating": 5},
		}},
		map[string]any{"name": "Patio", "level": 1},
	}
	got, errs = w.update(t, map[string]any{"id": made.ID, "expectedVersion": 2, "environments": rooms})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got.Version != 3 || got.RentalPrice != "2000000.00" || len(got.Environments) != 2 {
		t.Fatalf("tree replaced: %+v", got)
	}
	sala, patio := got.Environments[0], got.Environments[1]
	if sala.ID != kept.ID || sala.Name != "Sala comedor" || len(sala.Items) != 2 || patio.Name != "Patio" || len(patio.Items) != 0 ||
		patio.ID == made.Environments[1].ID {
		t.Errorf("rooms: %+v", got.Environments)
	}
	var ids []string
	for _, it := range sala.Items {
		ids = append(ids, it.ID)
	}
	if !strings.Contains(strings.Join(ids, " "), kept.Items[1].ID) || strings.Contains(strings.Join(ids, " "), kept.Items[0].ID) {
		t.Errorf("items %v: want %s kept and %s gone", ids, kept.Items[1].ID, kept.Items[0].ID)
	}
	// Each accepted write is an audit line.
	var audits []string
	for _, l := range w.log.Take(t) {
		if l["msg"] == "records: inventory updated" && l["inventory"] == made.ID && l["company"] == companyA {
			audits = append(audits, fmt.Sprint(l["version"]))
		}
	}
	if strings.Join(audits, ",") != "2,3" {
		t.Errorf("audit lines of the updates: versions %v, want 2,3", audits)
	}
}

// An item kept by its id keeps its photos; the items not kept lose theirs.
func TestUpdateInventoryKeepsThePhotosOfTheItemsItKeeps(t *testing.T) {
	w := newWrites(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	invs, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(false)).Order(inventory.ByID()).
		WithEnvironments(func(q *ent.EnvironmentQuery) { q.WithItems(func(q *ent.ItemQuery) { q.WithPhotos() }) }).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inv *ent.Inventory
	var withPhotos []*ent.Item
	for _, candidate := range invs {
		withPhotos = nil
		for _, env := range candidate.Edges.Environments {
			for _, it := range env.Edges.Items {
				if len(it.Edges.Photos) > 0 {
					withPhotos = append(withPhotos, it)
				}
			}
		}
		if len(withPhotos) >= 2 {
			inv = candidate
			break
		}
	}
	if inv == nil {
		t.Fatal("no unsigned demo inventory has two items with photos")
	}
	keep, drop := withPhotos[0], withPhotos[1]
	rooms := []any{map[string]any{"name": "Sala", "level": 1, "items": []any{
		map[string]any{"id": keep.ID.String(), "name": keep.Name, "materialId": keep.MaterialID.String(), "rating": 1, "toRepair": true},
	}}}
	got, errs := w.update(t, map[string]any{"id": inv.ID.String(), "expectedVersion": inv.Version, "environments": rooms})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var want, refs []string
	for _, p := range keep.Edges.Photos {
		want = append(want, p.StorageReference)
	}
	it := got.Environments[0].Items[0]
	for _, p := range it.Photos {
		refs = append(refs, p.StorageReference)
	}
	if it.ID != keep.ID.String() || it.Rating != 1 || strings.Join(refs, " ") != strings.Join(want, " ") {
		t.Errorf("item kept: %s rated %d with photos %v; want %s rated 1 with %v", it.ID, it.Rating, refs, keep.ID, want)
	}
	if n, err := w.st.Client.Photo.Query().Where(photo.ItemID(drop.ID)).Count(ctx); err != nil || n != 0 {
		t.Errorf("photos of the item not kept: %d (%v), want none", n, err)
	}
}

// A signed inventory cannot change: CONFLICT, saying to make a new one.
func TestSignedInventoriesCannotBeUpdated(t *testing.T) {
	w := newWrites(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	inv, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(true)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range []map[string]any{
		{"id": inv.ID.String(), "expectedVersion": inv.Version, "rentalPrice": "1.00"},
		{"id": inv.ID.String(), "expectedVersion": inv.Version, "environments": []any{}},
		{"id": inv.ID.String(), "expectedVersion": inv.Version + 7, "currency": "USD"},
	} {
		_, errs := w.update(t, input)
		if len(errs) != 1 || errs[0].Code() != "CONFLICT" || !strings.Contains(errs[0].Message, "make a new inventory") {
			t.Errorf("updating a signed inventory (%v): %+v; want CONFLICT saying to make a new inventory", input, errs)
		}
	}
	after, err := w.st.Client.Inventory.Get(ctx, inv.ID)
	if err != nil || after.Version != inv.Version || !after.RentalPrice.Equal(inv.RentalPrice) {
		t.Errorf("the signed inventory changed: %+v (%v)", after, err)
	}
}

// createInventory sent again with other content under the id of an
// inventory of the caller's says what would record that content:
// updateInventory while no one has signed; once a party has, or all have,
// that the record is signed and a new inventory is needed (updateInventory
// would refuse it).
func TestCreateInventorySentAgainForASignedOneSaysToMakeANewOne(t *testing.T) {
	w := newWrites(t)
	id := uuid.NewString()
	made, errs := w.create(t, w.tree(id, 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	other := w.tree(id, 1, 1)
	other["rentalPrice"] = "1.00"
	resend := func(state, want string) {
		t.Helper()
		_, errs := w.create(t, other)
		if !refused(errs, "CONFLICT", "id") || !strings.Contains(errs[0].Message, want) ||
			(want != "updateInventory" && strings.Contains(errs[0].Message, "updateInventory")) {
			t.Errorf("createInventory with other content, %s: %+v; want CONFLICT on id saying %q", state, errs, want)
		}
	}
	resend("unsigned", "updateInventory")
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": id, "party": "AGENT", "signerName": "Ana Gómez", "expectedVersion": made.Version}); len(errs) > 0 {
		t.Fatal(errs)
	}
	resend("signed by the agent", "make a new inventory")
	if _, errs := w.sign(t, companyA, map[string]any{"inventoryId": id, "party": "OWNER", "signerName": "Luis Pérez"}); len(errs) > 0 {
		t.Fatal(errs)
	}
	resend("signed", "is signed")
	resend("signed", "make a new inventory, with another id or none")
	// What it names is so: updateInventory refuses the signed record too.
	if _, errs := w.update(t, map[string]any{"id": id, "expectedVersion": made.Version + 2, "rentalPrice": "1.00"}); !refused(errs, "CONFLICT", "") {
		t.Errorf("updateInventory of the signed inventory: %+v; want CONFLICT", errs)
	}
}

// Another company's records read as not there; a record of another
// inventory cannot be taken into this one's tree.
func TestWritesStayWithinTheCallersCompany(t *testing.T) {
	w := newWrites(t)
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[1])
	theirs, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(false)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := w.update(t, map[string]any{"id": theirs.ID.String(), "expectedVersion": theirs.Version, "rentalPrice": "1.00"}); len(errs) != 1 ||
		errs[0].Code() != "NOT_FOUND" {
		t.Errorf("updating another company's inventory: %+v; want NOT_FOUND", errs)
	}
	// Their inventory's id, in a create of ours: not theirs to see, and not ours to take.
	if _, errs := w.create(t, w.tree(theirs.ID.String(), 1, 1)); len(errs) != 1 || errs[0].Code() != "CONFLICT" {
		t.Errorf("creating under another company's inventory id: %+v; want CONFLICT", errs)
	}
	mine, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	other, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rooms := []any{map[string]any{"name": "Sala", "items": []any{
		map[string]any{"id": other.Environments[0].Items[0].ID, "name": "Piso", "materialId": w.materials[0], "rating": 4},
	}}}
	if _, errs := w.update(t, map[string]any{"id": mine.ID, "expectedVersion": 1, "environments": rooms}); len(errs) != 1 ||
		errs[0].Code() != "CONFLICT" || errs[0].Extensions["field"] != "environments[0].items[0].id" {
		t.Errorf("taking another inventory's item: %+v; want CONFLICT on its id", errs)
	}
	after, err := w.st.Client.Inventory.Get(tenant.WithCompany(context.Background(), datagen.DemoCompanies[1]), theirs.ID)
	if err != nil || after.Version != theirs.Version {
		t.Errorf("another company's inventory changed: %+v (%v)", after, err)
	}
	// Without a company, nothing.
	if _, errs := w.mutate(t, "", createMutation, w.tree(uuid.NewString(), 1, 1), "createInventory"); len(errs) != 1 || errs[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("a create without a company: %+v; want UNAUTHENTICATED", errs)
	}
}

// TestAnIDNamesOneRecordInTheWholeAPI: an id a write gives that is any
// record's already, of any type and any company, is CONFLICT naming the
// field, in the same words whether the record is the caller's or another
// company's, so that no caller learns that a UUID exists elsewhere; and
// nothing is written. createInventory once took an item's id, and the new
// inventory then listed but read as null through node, A1 and B2.
func TestAnIDNamesOneRecordInTheWholeAPI(t *testing.T) {
	w := newWrites(t)
	ctx := context.Background()
	ctxA, ctxB := tenant.WithCompany(ctx, datagen.DemoCompanies[0]), tenant.WithCompany(ctx, datagen.DemoCompanies[1])
	existing := map[string]uuid.UUID{"a material": uuid.MustParse(w.materials[0])}
	for _, c := range []struct {
		whose string
		ctx   context.Context
	}{{"ours", ctxA}, {"theirs", ctxB}} {
		inv, err := w.st.Client.Inventory.Query().Where(inventory.IsSigned(false)).First(c.ctx)
		if err != nil {
			t.Fatal(err)
		}
		ph, err := w.st.Client.Photo.Query().First(c.ctx)
		if err != nil {
			t.Fatal(err)
		}
		existing["an inventory of "+c.whose] = inv.ID
		existing["a property of "+c.whose] = w.st.Client.Property.Query().FirstIDX(c.ctx)
		existing["a room of "+c.whose] = w.st.Client.Environment.Query().FirstIDX(c.ctx)
		existing["an item of "+c.whose] = w.st.Client.Item.Query().FirstIDX(c.ctx)
		existing["a photo of "+c.whose] = ph.ID
	}
	before := w.count(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	item := made.Environments[0].Items[0].ID
	messages := map[string]bool{}
	refused := func(what string, errs []apitest.Error, field string, id uuid.UUID) {
		t.Helper()
		if len(errs) != 1 || errs[0].Code() != "CONFLICT" || errs[0].Extensions["field"] != field {
			t.Errorf("%s: %+v; want CONFLICT on %s", what, errs, field)
			return
		}
		messages[strings.ReplaceAll(errs[0].Message, id.String(), "<id>")] = true
	}
	for what, id := range existing {
		in := w.tree(id.String(), 1, 1)
		_, errs := w.create(t, in)
		refused("createInventory under the id of "+what, errs, "id", id)

		in = w.tree(uuid.NewString(), 2, 2)
		in["environments"].([]any)[1].(map[string]any)["items"].([]any)[0].(map[string]any)["id"] = id.String()
		_, errs = w.create(t, in)
		refused("an item made under the id of "+what, errs, "environments[1].items[0].id", id)

		rooms := []any{map[string]any{"id": id.String(), "name": "Sala"}}
		_, errs = w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version, "environments": rooms})
		refused("a room added under the id of "+what, errs, "environments[0].id", id)

		_, _, errs = upload(t, w.srv, companyA, map[string]any{"itemId": item, "photoId": id.String()}, aJPEG(t), preflight)
		refused("a photo added under the id of "+what, errs, "photoId", id)
	}
	if len(messages) != 4 {
		t.Errorf("the refusals said %d things: %v; want one for each field (caller's or not, any type)", len(messages), messages)
	}
	if n := w.count(t); n != before+1 {
		t.Errorf("inventories: %d, want %d: a refused write wrote", n, before+1)
	}
	got, err := w.st.Client.Inventory.Query().Where(inventory.ID(uuid.MustParse(made.ID))).WithEnvironments().Only(ctxA)
	if err != nil || got.Version != made.Version || len(got.Edges.Environments) != 1 {
		t.Errorf("the inventory refused changes: %+v, %v; want it as made", got, err)
	}
}

// What a write costs the database does not grow with its tree: bulk
// inserts, and checks that a transaction remembers.
func TestWritesCostTheSameStatementsForAnySize(t *testing.T) {
	counter := testdb.Counter{InTransactions: true}
	w := newWrites(t, counter.Option())
	statements := func(do func() []apitest.Error) (int, string) {
		counter.Reset()
		if errs := do(); len(errs) > 0 {
			t.Fatal(errs)
		}
		return counter.Count(), counter.Statements()
	}
	var creates, updates []int
	var last, lastUpdate string
	for _, size := range [][2]int{{1, 1}, {6, 10}, {10, 60}} {
		var made written
		n, all := statements(func() []apitest.Error {
			var errs []apitest.Error
			made, errs = w.create(t, w.tree(uuid.NewString(), size[0], size[1]))
			return errs
		})
		creates, last = append(creates, n), all
		tree := w.tree("", size[0], size[1])["environments"].([]any)
		n, lastUpdate = statements(func() []apitest.Error {
			_, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": 1, "environments": tree})
			return errs
		})
		updates = append(updates, n)
	}
	if creates[0] != creates[1] || creates[1] != creates[2] {
		t.Errorf("createInventory of 1, 60 and 600 items: %v statements; want the same (the last:\n%s)", creates, last)
	}
	if updates[0] != updates[1] || updates[1] != updates[2] {
		t.Errorf("updateInventory of 1, 60 and 600 items: %v statements; want the same (the last:\n%s)", updates, lastUpdate)
	}
	t.Logf("statements: createInventory %d, updateInventory %d (with the answer's tree, BEGIN and COMMIT)\n%s\n%s", creates[0], updates[0], last, lastUpdate)
}

// Who may write: an API key made with the write scope; a read key (the
// default, and every key made before scopes) is FORBIDDEN; in header mode
// the gateway answers for its callers, unless writes are turned off
// (INVENTORY_WRITES=off), when every write is FORBIDDEN. And GET, which a
// link or an img tag can send, does not run a mutation.
func TestOnlyWriteCredentialsWriteAndOnlyWithPOST(t *testing.T) {
	w := newWrites(t)
	before := w.count(t)
	keys := auth.NewKeys(w.st.Client)
	reader, _, err := keys.Create(context.Background(), datagen.DemoCompanies[0], "office-report", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	writer, _, err := keys.Create(context.Background(), datagen.DemoCompanies[0], "field-app", auth.ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	srv := apitest.NewServerWith(t, w.st, server.Options{Files: apitest.Files(t), Auth: auth.APIKey, Verifier: keys})
	create := func(srv *apitest.Server, header, value string) apitest.Response {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": createMutation, "variables": map[string]any{"input": w.tree(uuid.NewString(), 1, 1)}})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(header, value)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var answer apitest.Response
		if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
			t.Fatal(err)
		}
		return answer
	}
	if answer := create(srv, "X-Api-Key", reader); len(answer.Errors) != 1 || answer.Errors[0].Code() != "FORBIDDEN" ||
		!strings.Contains(answer.Errors[0].Message, "--scope write") {
		t.Errorf("a mutation with a read key: %+v; want FORBIDDEN saying how to get a write key", answer)
	}
	if n := w.count(t); n != before {
		t.Errorf("inventories after a read key's mutation: %d, want %d", n, before)
	}
	if answer := create(srv, "X-Api-Key", writer); len(answer.Errors) > 0 {
		t.Errorf("a mutation with a write key: %+v; want it done", answer.Errors)
	}
	if n := w.count(t); n != before+1 {
		t.Errorf("inventories after a write key's mutation: %d, want %d", n, before+1)
	}
	// The write's event names the key that wrote it (Property.timeline's by).
	last, err := w.st.Client.RecordEvent.Query().Order(ent.Desc(recordevent.FieldID)).
		First(tenant.WithCompany(context.Background(), datagen.DemoCompanies[0]))
	if err != nil || last.Kind != recordevent.KindInventoryCreated || last.Actor == nil || *last.Actor != "field-app" {
		t.Errorf("the write key's event: %+v (%v); want inventory_created by field-app", last, err)
	}
	before = w.count(t)

	// Writes off (INVENTORY_WRITES=off): a setting of the server, not of
	// the process, so another server on the same database still writes.
	readOnly := apitest.NewServerWith(t, w.st, server.Options{Files: apitest.Files(t), Auth: auth.APIKey, Verifier: keys, ReadOnly: true})
	readOnlyHeader := apitest.NewServerWith(t, w.st, server.Options{Files: apitest.Files(t), ReadOnly: true})
	for name, answer := range map[string]apitest.Response{"write key": create(readOnly, "X-Api-Key", writer), "header mode": create(readOnlyHeader, "X-Company-Id", companyA)} {
		if len(answer.Errors) != 1 || answer.Errors[0].Code() != "FORBIDDEN" || !strings.Contains(answer.Errors[0].Message, "INVENTORY_WRITES=off") {
			t.Errorf("%s with writes off: %+v; want FORBIDDEN naming the setting", name, answer)
		}
	}

	get := "/graphql?query=" + url.QueryEscape(`mutation { createInventory(input: {propertyId: "`+w.property+
		`", inventoryType: CAPTACION, rentalPrice: "1.00"}) { inventory { id } } }`)
	res2, raw := w.srv.Get(t, get, http.Header{"X-Company-Id": {companyA}})
	if res2.StatusCode == http.StatusOK && !strings.Contains(string(raw), "errors") {
		t.Errorf("a mutation sent with GET: %d %s; want it refused", res2.StatusCode, raw)
	}
	if n := w.count(t); n != before {
		t.Errorf("inventories: %d, want %d", n, before)
	}
}
