package transfer_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/thumbnail"
	"github.com/propertyrecords/inventory/internal/transfer"
)

var small = datagen.Size{Companies: 2, PropertiesPerCompany: 3, InventoriesPerProperty: 2,
	MinEnvironments: 2, MaxEnvironments: 3, MinItems: 1, MaxItems: 3, MaxPhotos: 2}

// generated is a database and file store holding a generated dataset of two
// companies, with its files.
func generated(t *testing.T) (*store.Store, *files.Store) {
	t.Helper()
	st, fs := testdb.Open(t), apitest.Files(t)
	if _, err := datagen.Load(context.Background(), st.Client, fs, 5, small); err != nil {
		t.Fatal(err)
	}
	return st, fs
}

// exported exports the first company of a generated dataset, files included.
func exported(t *testing.T) (lines []string, filesDir string) {
	t.Helper()
	st, fs := generated(t)
	return export(t, st, fs, datagen.DemoCompanies[0])
}

func export(t *testing.T, st *store.Store, fs *files.Store, company uuid.UUID) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	var out bytes.Buffer
	n, err := (&transfer.Exporter{Client: st.Client, Files: fs, FilesDir: dir}).Export(context.Background(), company, &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if n != len(lines) || n == 0 {
		t.Fatalf("Export reported %d records and wrote %d lines", n, len(lines))
	}
	return lines, dir
}

func importLines(t *testing.T, st *store.Store, fs *files.Store, dir string, lines ...string) transfer.Summary {
	t.Helper()
	im := &transfer.Importer{Client: st.Client, Files: fs, FilesDir: dir}
	sum, err := im.Import(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestExportImportExportGivesBackTheSameRecordsAndFiles(t *testing.T) {
	source, sourceFiles := generated(t)
	a, b := datagen.DemoCompanies[0], datagen.DemoCompanies[1]
	// One inventory the tenant must sign, and has: its parties come back too.
	ctx, err := tenant.ForWriting(tenant.WithCompany(context.Background(), a))
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := source.Client.Inventory.Query().Where(inventory.IsSigned(false)).First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := unsigned.Update().SetRequiredSignatures("AGENT,OWNER,TENANT").SetTenantSignatureDate(time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	lines, dir := export(t, source, sourceFiles, a)
	if n := strings.Count(strings.Join(lines, "\n"), `"TenantSignatureDate":"2026-05-04T03:02:01`); n != 1 ||
		strings.Count(strings.Join(lines, "\n"), `"RequiredSignatures":["AGENT","OWNER","TENANT"]`) != 1 {
		t.Errorf("the export says the tenant's signature %d times, want once, with the parties required", n)
	}
	linesB, dirB := export(t, source, sourceFiles, b)
	if !strings.Contains(strings.Join(lines, ""), `"PdfFile":"pdf/`) || !strings.Contains(strings.Join(lines, ""), `"File":"photos/`) {
		t.Fatal("the export names no PDF or photo file")
	}
	st, fs := testdb.Open(t), apitest.Files(t)
	sum := importLines(t, st, fs, dir, lines...)
	if sum.Created != len(lines) || sum.Updated != 0 || len(sum.Rejections) != 0 {
		t.Fatalf("import: %v %v", sum, sum.Rejections)
	}
	if sum := importLines(t, st, fs, dirB, linesB...); sum.Created != len(linesB) || len(sum.Rejections) != 0 {
		t.Errorf("import of the second company: %v %v", sum, sum.Rejections)
	}
	again, dir2 := export(t, st, fs, a)
	if strings.Join(again, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("export after import differs:\nfirst:  %s\nsecond: %s", lines[0], again[0])
	}
	// The files came through byte for byte.
	var checked int
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		a, _ := os.ReadFile(path)
		b, err := os.ReadFile(filepath.Join(dir2, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s did not come back unchanged (%v)", rel, err)
		}
		checked++
		return nil
	})
	if checked == 0 {
		t.Error("no file was exported")
	}
	// Import made each photo's thumbnail as it stored it, so no report has
	// to decode the photo.
	photos, _ := filepath.Glob(filepath.Join(dir, "photos", "*"))
	if len(photos) == 0 {
		t.Fatal("no photo was exported")
	}
	for _, path := range photos {
		data, _ := os.ReadFile(path)
		sum := sha256.Sum256(data)
		key, _ := files.ThumbnailKey(hex.EncodeToString(sum[:]))
		if thumb, err := fs.Get(context.Background(), key); err != nil || !thumbnail.Valid(thumb) {
			t.Errorf("%s: no thumbnail kept at %s (%v)", filepath.Base(path), key, err)
		}
	}

	// With both companies in the database, the first one's export holds
	// nothing of the second's: no id of its properties, inventories,
	// environments, items or photos, and no line naming it.
	if againB, _ := export(t, st, fs, b); strings.Join(againB, "\n") != strings.Join(linesB, "\n") {
		t.Errorf("the second company's export after import differs:\nfirst:  %s\nsecond: %s", linesB[0], againB[0])
	}
	exportA := strings.Join(again, "\n")
	idsB := uuidPattern.FindAllString(strings.Join(linesB, "\n"), -1)
	if len(idsB) < len(linesB)*3 {
		t.Fatalf("found %d ids in the second company's %d lines", len(idsB), len(linesB))
	}
	for _, id := range idsB {
		if id != b.String() && strings.Contains(exportA, id) {
			t.Errorf("the first company's export holds %s, of the second company", id)
		}
	}
	for i, l := range again {
		var rec transfer.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.CompanyID != a.String() {
			t.Errorf("line %d of the first company's export names company %s", i+1, rec.CompanyID)
		}
	}
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Export reads a page of inventories at a time; a company of several pages,
// most of whose inventories share one creation date (so that pages end inside
// a run of equal dates), comes out whole: every inventory exactly once, in
// (creation date, id) order, each with its tree.
func TestExportOfSeveralPagesHoldsEveryInventoryOnce(t *testing.T) {
	const n = 450
	st := testdb.Open(t)
	ctx := tenant.Unrestricted(context.Background(), "test: writing a company of several export pages")
	company := uuid.New()
	mat, err := st.Client.Material.Create().SetName("Ladrillo").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	var props []*ent.PropertyCreate
	var invs []*ent.InventoryCreate
	var envs []*ent.EnvironmentCreate
	var items []*ent.ItemCreate
	want := map[string]bool{}
	for i := range n {
		prop, inv, env := uuid.New(), uuid.New(), uuid.New()
		if i%3 == 0 {
			props = append(props, st.Client.Property.Create().SetID(prop).SetCompanyID(company).
				SetAddress(fmt.Sprintf("Calle %d", i)).SetCity("Cali").SetPropertyType("Casa"))
		} else {
			prop, _ = props[len(props)-1].Mutation().ID()
		}
		created := same // two in three share it
		if i%3 == 0 {
			created = same.Add(time.Duration(i-n/2) * time.Hour)
		}
		invs = append(invs, st.Client.Inventory.Create().SetID(inv).SetCompanyID(company).SetPropertyID(prop).
			SetInventoryType(inventorytype.Type(i%4)).SetRentalPrice(decimal.NewFromInt(1_000_000)).SetCreatedAt(created))
		envs = append(envs, st.Client.Environment.Create().SetID(env).SetCompanyID(company).SetInventoryID(inv).SetName("Sala"))
		items = append(items, st.Client.Item.Create().SetCompanyID(company).SetEnvironmentID(env).SetMaterialID(mat.ID).
			SetName(fmt.Sprintf("Piso %d", i)).SetRating(3))
		want[inv.String()] = true
	}
	if err := st.Client.Property.CreateBulk(props...).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveInBatches(ctx, invs, func(b []*ent.InventoryCreate) error { return st.Client.Inventory.CreateBulk(b...).Exec(ctx) }); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveInBatches(ctx, envs, func(b []*ent.EnvironmentCreate) error { return st.Client.Environment.CreateBulk(b...).Exec(ctx) }); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveInBatches(ctx, items, func(b []*ent.ItemCreate) error { return st.Client.Item.CreateBulk(b...).Exec(ctx) }); err != nil {
		t.Fatal(err)
	}

	lines, _ := export(t, st, nil, company)
	if len(lines) != n {
		t.Errorf("exported %d inventories, want %d", len(lines), n)
	}
	seen := map[string]int{}
	var prev transfer.Record
	for i, l := range lines {
		var rec transfer.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		seen[rec.InventoryID]++
		if seen[rec.InventoryID] == 2 {
			t.Errorf("inventory %s exported twice", rec.InventoryID)
		}
		if !want[rec.InventoryID] {
			t.Errorf("line %d: inventory %s was not written by the test", i+1, rec.InventoryID)
		}
		if i > 0 && (rec.CreationDate < prev.CreationDate || rec.CreationDate == prev.CreationDate && rec.InventoryID <= prev.InventoryID) {
			t.Errorf("line %d (%s %s) comes after %s %s", i+1, rec.CreationDate, rec.InventoryID, prev.CreationDate, prev.InventoryID)
		}
		if len(rec.EnvironmentDiagnostics) != 1 || len(rec.EnvironmentDiagnostics[0].ItemDiagnostic) != 1 {
			t.Errorf("line %d: inventory %s exported without its environment and item", i+1, rec.InventoryID)
		}
		prev = rec
	}
	for id := range want {
		if seen[id] == 0 {
			t.Errorf("inventory %s is missing from the export", id)
		}
	}
}

// A line the database refuses after the line's first rows are written (its
// property, inventory, environments and a new material) leaves none of them:
// each inventory is one transaction, rolled back whole. A trigger refuses the
// item named "boom", which is inserted after all of those.
func TestALineRefusedPartwayThroughItsWriteLeavesNothing(t *testing.T) {
	var drv dialect.Driver
	st := testdb.Open(t, store.WithDriver(func(d dialect.Driver) dialect.Driver { drv = d; return d }))
	ctx := context.Background()
	trigger := []string{`CREATE TRIGGER refuse_boom BEFORE INSERT ON items WHEN NEW.name = 'boom'
		BEGIN SELECT RAISE(ABORT, 'boom is refused'); END`}
	if st.Dialect() == dialect.Postgres {
		trigger = []string{
			`CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'boom is refused'; END $$`,
			`CREATE TRIGGER refuse_boom BEFORE INSERT ON items FOR EACH ROW
			WHEN (NEW.name = 'boom') EXECUTE FUNCTION refuse_boom()`,
		}
	}
	for _, stmt := range trigger {
		if err := drv.Exec(ctx, stmt, []any{}, nil); err != nil {
			t.Fatal(err)
		}
	}

	company := uuid.NewString()
	ids := [3][2]string{} // inventory, property of each line
	var input []string
	for i := range ids {
		ids[i] = [2]string{uuid.NewString(), uuid.NewString()}
		r := minimal(company, ids[i][0], ids[i][1])
		if i == 1 {
			env := r["EnvironmentDiagnostics"].([]any)[0].(map[string]any)
			env["ItemDiagnostic"] = append(env["ItemDiagnostic"].([]any), map[string]any{
				"ItemName": "boom", "Description": "", "Rating": 3, "Material": map[string]any{"MaterialName": "Dinamita"}})
		}
		input = append(input, line(t, r))
	}
	sum := importLines(t, st, nil, "", input...)

	if len(sum.Rejections) != 1 || sum.Rejections[0].Line != 2 || !strings.Contains(sum.Rejections[0].Reason, "boom is refused") {
		t.Fatalf("rejections: %+v, want line 2 refused by the trigger", sum.Rejections)
	}
	if sum.Created != 2 {
		t.Errorf("created %d, want the other 2 lines", sum.Created)
	}
	all := tenant.Unrestricted(ctx, "test: looking for what the refused line left")
	refused := uuid.MustParse(ids[1][0])
	if n, err := st.Client.Property.Query().Where(property.ID(uuid.MustParse(ids[1][1]))).Count(all); err != nil || n != 0 {
		t.Errorf("the refused line's property: %d stored (%v), want none", n, err)
	}
	if n, err := st.Client.Inventory.Query().Where(inventory.ID(refused)).Count(all); err != nil || n != 0 {
		t.Errorf("the refused line's inventory: %d stored (%v), want none", n, err)
	}
	if n, err := st.Client.Environment.Query().Where(environment.InventoryID(refused)).Count(all); err != nil || n != 0 {
		t.Errorf("the refused line's environments: %d stored (%v), want none", n, err)
	}
	if n, err := st.Client.Material.Query().Where(material.Name("Dinamita")).Count(all); err != nil || n != 0 {
		t.Errorf("the refused line's new material: %d stored (%v), want none", n, err)
	}
	for _, i := range []int{0, 2} {
		inv, err := st.Client.Inventory.Query().Where(inventory.ID(uuid.MustParse(ids[i][0]))).WithEnvironments().Only(all)
		if err != nil || len(inv.Edges.Environments) != 1 {
			t.Errorf("line %d: %v, %v; want its inventory with its environment", i+1, inv, err)
		}
	}
}

func TestReimportUpdatesInsteadOfDuplicating(t *testing.T) {
	lines, dir := exported(t)
	st, fs := testdb.Open(t), apitest.Files(t)
	importLines(t, st, fs, dir, lines...)

	records := make([]transfer.Record, len(lines))
	var rec *transfer.Record // the first signed one: it becomes unsigned, and its property moves city
	for i := range lines {
		if err := json.Unmarshal([]byte(lines[i]), &records[i]); err != nil {
			t.Fatal(err)
		}
		if rec == nil && records[i].IsSigned {
			rec = &records[i]
		}
	}
	rec.RentalPrice = "4321000.50"
	rec.EnvironmentDiagnostics = rec.EnvironmentDiagnostics[:1]
	rec.IsSigned, rec.IsRemoteSigned, rec.ApprovalCode, rec.SignatureDate, rec.PdfSha256, rec.PdfFile = false, false, nil, nil, nil, ""
	for i, r := range records {
		if r.Property.PropertyID == rec.Property.PropertyID {
			records[i].Property.City = "Pasto"
		}
		changed, _ := json.Marshal(records[i])
		lines[i] = string(changed)
	}

	// The changed signed line is refused: a signed record is evidence. The
	// others go in: those of the property that moved city update it, the
	// rest, signed or not, are stated as they are (nothing of them is
	// written).
	moved := 0
	for _, r := range records {
		if r.Property.PropertyID == rec.Property.PropertyID && r.InventoryID != rec.InventoryID {
			moved++
		}
	}
	sum := importLines(t, st, fs, dir, lines...)
	if sum.Created != 0 || sum.Updated != moved || sum.Unchanged != len(lines)-1-moved || len(sum.Rejections) != 1 ||
		sum.Rejections[0].Field != "InventoryId" || !strings.Contains(sum.Rejections[0].Reason, "is signed and this line changes it") {
		t.Fatalf("re-import: %v %v; want %d updated (their property moved), the changed signed inventory refused, the rest unchanged", sum, sum.Rejections, moved)
	}
	// Told to correct signed inventories, the import does, and says so in
	// an audit line naming the inventory and the line.
	var audit apitest.LogBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(audit.Logger(slog.LevelInfo))
	im := &transfer.Importer{Client: st.Client, Files: fs, FilesDir: dir, CorrectSigned: true}
	sum, err := im.Import(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil || sum.Created != 0 || sum.Updated != 1 || sum.Unchanged != len(lines)-1 || len(sum.Rejections) != 0 {
		t.Fatalf("re-import with CorrectSigned: %v %v (%v); want the correction alone written", sum, sum.Rejections, err)
	}
	var corrections []map[string]any
	for _, l := range audit.Take(t) {
		if l["msg"] == "freeze: a signed inventory was corrected" {
			corrections = append(corrections, l)
		}
	}
	if len(corrections) != 1 || corrections[0]["inventory"] != rec.InventoryID || !strings.Contains(fmt.Sprint(corrections[0]["reason"]), "--correct-signed") {
		t.Errorf("audit lines of the corrections: %v; want one naming %s", corrections, rec.InventoryID)
	}
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	if n, _ := st.Client.Inventory.Query().Count(ctx); n != len(lines) {
		t.Errorf("%d inventories after re-import, want %d", n, len(lines))
	}
	// Each write of the import is an event, for the property's timeline:
	// the refused line none, the correction its own kind.
	events, err := st.Client.RecordEvent.Query().Where(recordevent.InventoryID(uuid.MustParse(rec.InventoryID))).
		Order(ent.Asc(recordevent.FieldID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range events {
		if ev.Actor == nil || *ev.Actor != "inventoryd import" {
			t.Errorf("event %s by %v, want by inventoryd import", ev.Kind, ev.Actor)
		}
		kinds = append(kinds, string(ev.Kind))
	}
	if want := []string{"inventory_created", "inventory_corrected"}; !slices.Equal(kinds, want) {
		t.Errorf("events of the corrected inventory: %v, want %v", kinds, want)
	}
	inv, err := st.Client.Inventory.Query().Where(inventory.ID(uuid.MustParse(rec.InventoryID))).
		WithProperty().WithEnvironments().Only(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if inv.IsSigned || inv.ApprovalCode != nil || inv.SignatureDate != nil || inv.PdfSha256 != nil {
		t.Errorf("the inventory re-imported unsigned keeps signature fields: %+v", inv)
	}
	if inv.RentalPrice.String() != "4321000.5" || len(inv.Edges.Environments) != 1 || inv.Edges.Property.City != "Pasto" {
		t.Errorf("updated inventory: price %s, %d environments, city %s", inv.RentalPrice, len(inv.Edges.Environments), inv.Edges.Property.City)
	}
}

// Importing an unchanged export again, into the database it came from,
// writes nothing: every line is counted unchanged, no record event (so no
// INVENTORY_UPDATED for subscribers or webhooks) and no version or update
// time moves.
func TestReimportingAnUnchangedExportWritesNothing(t *testing.T) {
	st, fs := generated(t)
	company := datagen.DemoCompanies[0]
	lines, dir := export(t, st, fs, company)
	if !strings.Contains(strings.Join(lines, ""), `"IsSigned":false`) || !strings.Contains(strings.Join(lines, ""), `"File":"photos/`) {
		t.Fatal("the export holds no unsigned inventory or no photo file: it shows nothing")
	}
	ctx := tenant.WithCompany(context.Background(), company)
	type written struct {
		version int
		updated *time.Time
	}
	state := func() (events int, inventories map[uuid.UUID]written) {
		t.Helper()
		events, err := st.Client.RecordEvent.Query().Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		invs, err := st.Client.Inventory.Query().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inventories = map[uuid.UUID]written{}
		for _, inv := range invs {
			inventories[inv.ID] = written{inv.Version, inv.UpdatedAt}
		}
		return events, inventories
	}
	eventsBefore, before := state()

	sum := importLines(t, st, fs, dir, lines...)
	if sum.Created != 0 || sum.Updated != 0 || sum.Unchanged != len(lines) || len(sum.Rejections) != 0 {
		t.Errorf("re-import of an unchanged export: %v %v; want all %d lines unchanged", sum, sum.Rejections, len(lines))
	}
	if want := fmt.Sprintf("imported 0 inventories (0 created, 0 updated), %d unchanged, rejected 0, in ", len(lines)); !strings.HasPrefix(sum.String(), want) {
		t.Errorf("summary %q, want %q…", sum, want)
	}
	eventsAfter, after := state()
	if eventsAfter != eventsBefore {
		t.Errorf("record events: %d before, %d after; want none written", eventsBefore, eventsAfter)
	}
	for id, w := range before {
		if got := after[id]; got.version != w.version || got.updated == nil || w.updated == nil || !got.updated.Equal(*w.updated) {
			t.Errorf("inventory %s: version %d updated %v, was %d %v; want neither moved", id, got.version, got.updated, w.version, w.updated)
		}
	}
}

// minimal is a valid record with no child ids, as a legacy system may have it.
func minimal(company, inventoryID, propertyID string) map[string]any {
	photo := inventoryID + ".jpg" // storage references are unique across the store
	return map[string]any{
		"CompanyId": company, "InventoryId": inventoryID, "InventoryType": 1, "RentalPrice": "1500000.00",
		"IsSigned": true, "Approval_Code": "APR-1", "CreationDate": "2024-03-01T10:00:00Z", "SignatureDate": "2024-03-02T10:00:00Z",
		"Property": map[string]any{"PropertyId": propertyID, "Address": "Calle 1 # 2-3", "City": "Cali", "PropertyType": "Casa", "Levels": 2},
		"EnvironmentDiagnostics": []any{map[string]any{
			"EnvironmentName": "Sala", "Description": "", "Level": 2,
			"ItemDiagnostic": []any{map[string]any{"ItemName": "Piso", "Description": "", "Rating": 4, "Order": 0, "ToRepair": false,
				"Material": map[string]any{"MaterialName": "Madera"}, "Photo": []any{map[string]any{"StorageReference": photo}}}},
		}},
	}
}

func line(t *testing.T, rec map[string]any) string {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRecordsWithoutChildIDsReimportIdempotently(t *testing.T) {
	st := testdb.Open(t)
	company := uuid.NewString()
	rec := line(t, minimal(company, uuid.NewString(), uuid.NewString()))
	for round := 0; round < 2; round++ {
		if sum := importLines(t, st, nil, "", rec); len(sum.Rejections) != 0 {
			t.Fatalf("round %d: %v", round, sum.Rejections)
		}
	}
	ctx := tenant.WithCompany(context.Background(), uuid.MustParse(company))
	envs, _ := st.Client.Environment.Query().Count(ctx)
	items, _ := st.Client.Item.Query().Count(ctx)
	photos, _ := st.Client.Photo.Query().Count(ctx)
	if envs != 1 || items != 1 || photos != 1 {
		t.Errorf("after importing twice: %d environments, %d items, %d photos; want 1 each", envs, items, photos)
	}
}

func TestInvalidRecordsNameTheFieldAndWriteNothing(t *testing.T) {
	st := testdb.Open(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "signed.pdf"), []byte("%PDF-1.4 test"), 0o644)
	os.WriteFile(filepath.Join(t.TempDir(), "outside.pdf"), []byte("secret"), 0o644)
	company, otherCompany := uuid.NewString(), uuid.NewString()
	// A property of another company, which no import may write into.
	taken, takenInventory := uuid.NewString(), uuid.NewString()
	if sum := importLines(t, st, nil, "", line(t, minimal(otherCompany, takenInventory, taken))); len(sum.Rejections) != 0 {
		t.Fatal(sum.Rejections)
	}
	edit := func(f func(r map[string]any)) string {
		r := minimal(company, uuid.NewString(), uuid.NewString())
		f(r)
		return line(t, r)
	}
	env := func(r map[string]any) map[string]any { return r["EnvironmentDiagnostics"].([]any)[0].(map[string]any) }
	item := func(r map[string]any) map[string]any { return env(r)["ItemDiagnostic"].([]any)[0].(map[string]any) }
	photo := func() map[string]any { return map[string]any{"StorageReference": uuid.NewString() + ".jpg"} }
	// copies repeats v n times, without ids, so that each copy gets its own.
	copies := func(v map[string]any, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tests := []struct {
		name, line, field, reason string
	}{
		{"not JSON", `{"CompanyId": `, "", "not valid JSON"},
		{"two values", line(t, minimal(company, uuid.NewString(), uuid.NewString())) + ` {}`, "", "more than one"},
		{"unknown field", edit(func(r map[string]any) { r["Colour"] = "red" }), "Colour", "unknown field"},
		{"wrong type", edit(func(r map[string]any) { r["IsSigned"] = "yes" }), "IsSigned", "true or false"},
		{"missing company", edit(func(r map[string]any) { delete(r, "CompanyId") }), "CompanyId", "missing"},
		{"malformed id", edit(func(r map[string]any) { r["InventoryId"] = "inv-1" }), "InventoryId", "not a UUID"},
		{"type out of range", edit(func(r map[string]any) { r["InventoryType"] = 7 }), "InventoryType", "0 to 3"},
		{"price not decimal", edit(func(r map[string]any) { r["RentalPrice"] = "mucho" }), "RentalPrice", "not decimal"},
		{"price with three places", edit(func(r map[string]any) { r["RentalPrice"] = "1.005" }), "RentalPrice", "two decimal places"},
		{"negative price", edit(func(r map[string]any) { r["RentalPrice"] = "-1" }), "RentalPrice", "out of range"},
		{"bad date", edit(func(r map[string]any) { r["CreationDate"] = "01/03/2024" }), "CreationDate", "RFC 3339"},
		{"signed without approval code", edit(func(r map[string]any) { delete(r, "Approval_Code") }), "Approval_Code", "missing"},
		{"unsigned with a signature date", edit(func(r map[string]any) { r["IsSigned"] = false; delete(r, "Approval_Code") }), "SignatureDate", "not signed"},
		{"level above the property's", edit(func(r map[string]any) { env(r)["Level"] = 3 }), "EnvironmentDiagnostics[0].Level", "above the property"},
		{"empty item name", edit(func(r map[string]any) { item(r)["ItemName"] = "" }), "EnvironmentDiagnostics[0].ItemDiagnostic[0].ItemName", "missing"},
		{"no material", edit(func(r map[string]any) { delete(item(r), "Material") }), "EnvironmentDiagnostics[0].ItemDiagnostic[0].Material.MaterialName", "missing"},
		{"not an image", edit(func(r map[string]any) {
			item(r)["Photo"] = []any{map[string]any{"StorageReference": "../../etc/passwd"}}
		}), "EnvironmentDiagnostics[0].ItemDiagnostic[0].Photo[0].StorageReference", "refused"},
		{"same id twice", edit(func(r map[string]any) {
			id := uuid.NewString()
			e := env(r)
			e["EnvironmentId"] = id
			r["EnvironmentDiagnostics"] = []any{e, map[string]any{"EnvironmentId": id, "EnvironmentName": "Cocina", "Description": "", "ItemDiagnostic": []any{}}}
		}), "EnvironmentDiagnostics[1].EnvironmentId", "used twice"},
		{"PDF of an unsigned inventory", edit(func(r map[string]any) {
			r["IsSigned"] = false
			delete(r, "Approval_Code")
			delete(r, "SignatureDate")
			r["PdfFile"] = "signed.pdf"
		}), "PdfFile", "unsigned"},
		{"file outside the files folder", edit(func(r map[string]any) { r["PdfFile"] = "../outside.pdf" }), "PdfFile", "cannot read"},
		{"file that differs from its digest", edit(func(r map[string]any) {
			r["PdfFile"] = "signed.pdf"
			r["PdfSha256"] = strings.Repeat("0", 64)
		}), "PdfFile", "SHA-256"},
		{"another company's property", edit(func(r map[string]any) { r["Property"].(map[string]any)["PropertyId"] = taken }), "Property.PropertyId", "another company"},
		{"another company's photo file", edit(func(r map[string]any) {
			item(r)["Photo"] = []any{map[string]any{"StorageReference": takenInventory + ".jpg", "File": "signed.pdf"}}
		}), "EnvironmentDiagnostics[0].ItemDiagnostic[0].Photo[0].StorageReference", "another inventory's photo"},
		// PostgreSQL refuses NUL in text and SQLite stores it: both databases are told no, by name.
		{"NUL in an item's description", edit(func(r map[string]any) { item(r)["Description"] = "Sin novedad\x00" }),
			"EnvironmentDiagnostics[0].ItemDiagnostic[0].Description", "NUL character"},
		{"NUL in the property's detail", edit(func(r map[string]any) { r["Property"].(map[string]any)["Detail"] = "Piso 3\x00" }),
			"Property.Detail", "NUL character"},
		// Every text has a stated bound, in characters, the API's and the
		// generator's (ent/schema/bounds.go): the message says it without
		// quoting the text.
		{"an item's description over its bound", edit(func(r map[string]any) { item(r)["Description"] = strings.Repeat("ñ", 2001) }),
			"EnvironmentDiagnostics[0].ItemDiagnostic[0].Description", "2001 characters long: at most 2000"},
		{"the property's detail over its bound", edit(func(r map[string]any) { r["Property"].(map[string]any)["Detail"] = strings.Repeat("x", 2001) }),
			"Property.Detail", "at most 2000"},
		{"the property's address over its bound", edit(func(r map[string]any) { r["Property"].(map[string]any)["Address"] = strings.Repeat("x", 257) }),
			"Property.Address", "at most 256"},
		{"a line too long", `{"CompanyId": "` + strings.Repeat("x", transfer.MaxLine) + `"}`, "", "longer than"},
		// A tree larger than GraphQL reads whole (the ListSize bounds of ent/schema).
		{"too many photos on an item", edit(func(r map[string]any) { item(r)["Photo"] = copies(photo(), ent.ItemPhotosMax+1) }),
			"EnvironmentDiagnostics[0].ItemDiagnostic[0].Photo", "at most 20"},
		{"too many items in an environment", edit(func(r map[string]any) { env(r)["ItemDiagnostic"] = copies(item(r), ent.EnvironmentItemsMax+1) }),
			"EnvironmentDiagnostics[0].ItemDiagnostic", "at most 200"},
		{"too many environments", edit(func(r map[string]any) { r["EnvironmentDiagnostics"] = copies(env(r), ent.InventoryEnvironmentsMax+1) }),
			"EnvironmentDiagnostics", "at most 60"},
		{"too many items in all", edit(func(r map[string]any) {
			e := env(r)
			e["ItemDiagnostic"] = copies(item(r), ent.EnvironmentItemsMax)
			r["EnvironmentDiagnostics"] = copies(e, ent.EnvironmentItemsPerInventory/ent.EnvironmentItemsMax+1)
		}), "EnvironmentDiagnostics", "1200 items in all"},
		{"too many photos in all", edit(func(r map[string]any) {
			it := item(r)
			it["Photo"] = copies(photo(), ent.ItemPhotosMax)
			e := env(r)
			e["ItemDiagnostic"] = copies(it, ent.ItemPhotosPerInventory/ent.ItemPhotosMax/8+1)
			r["EnvironmentDiagnostics"] = copies(e, 8)
		}), "EnvironmentDiagnostics", "3040 photos in all"},
	}
	var input []string
	for _, tt := range tests {
		input = append(input, tt.line)
	}
	fs := apitest.Files(t)
	im := &transfer.Importer{Client: st.Client, Files: fs, FilesDir: dir}
	sum, err := im.Import(context.Background(), strings.NewReader(strings.Join(input, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Get(context.Background(), "photos/"+takenInventory+".jpg"); err == nil {
		t.Error("a refused record overwrote another company's photo file")
	}
	byLine := map[int]transfer.Rejection{}
	for _, r := range sum.Rejections {
		byLine[r.Line] = r
	}
	for i, tt := range tests {
		got, ok := byLine[i+1]
		if !ok || got.Field != tt.field || !strings.Contains(got.Reason, tt.reason) {
			t.Errorf("%s: got %+v, want field %q and a reason with %q", tt.name, got, tt.field, tt.reason)
		}
	}
	if sum.Created+sum.Updated != 0 {
		t.Errorf("%d invalid records were written", sum.Created+sum.Updated)
	}
	if n, _ := st.Client.Inventory.Query().Count(tenant.WithCompany(context.Background(), uuid.MustParse(company))); n != 0 {
		t.Errorf("%d inventories written from invalid records", n)
	}

	// An inventory cannot move to another property, nor be taken over by another company.
	inv, prop := uuid.NewString(), uuid.NewString()
	importLines(t, st, nil, "", line(t, minimal(company, inv, prop)))
	moved := importLines(t, st, nil, "", line(t, minimal(company, inv, uuid.NewString())))
	stolen := importLines(t, st, nil, "", line(t, minimal(otherCompany, inv, prop)))
	if len(moved.Rejections) != 1 || !strings.Contains(moved.Rejections[0].Reason, "cannot move") {
		t.Errorf("moving an inventory: %+v", moved.Rejections)
	}
	if len(stolen.Rejections) != 1 || !strings.Contains(stolen.Rejections[0].Reason, "another company") {
		t.Errorf("taking over an inventory: %+v", stolen.Rejections)
	}
}

// BenchmarkImport reports the import rate (records/s, one transaction each)
// of generated inventories of about 22 items each, without files.
func BenchmarkImport(b *testing.B) {
	st := testdb.Open(b)
	size := datagen.Size{Companies: 1, PropertiesPerCompany: 50, InventoriesPerProperty: 2,
		MinEnvironments: 3, MaxEnvironments: 6, MinItems: 3, MaxItems: 7, MaxPhotos: 2}
	if _, err := datagen.Load(context.Background(), st.Client, nil, 11, size); err != nil {
		b.Fatal(err)
	}
	var file bytes.Buffer
	n, err := (&transfer.Exporter{Client: st.Client}).Export(context.Background(), datagen.DemoCompanies[0], &file)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		target := testdb.Open(b)
		b.StartTimer()
		sum, err := (&transfer.Importer{Client: target.Client}).Import(context.Background(), bytes.NewReader(file.Bytes()))
		if err != nil || sum.Created != n {
			b.Fatalf("imported %v (%v), want %d created", sum, err, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}
