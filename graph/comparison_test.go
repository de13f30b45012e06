package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

const comparisonQuery = `query($from: ID!, $to: ID!) {
  inventoryComparison(from: $from, to: $to) {
    from { id inventoryTypeName }
    to { id inventoryTypeName environments { name items { name photos { storageReference } } } }
    summary { unchanged worse better added removed newlyToRepair }
    environments {
      name level presence fromEnvironmentId toEnvironmentId
      items {
        name change fromRating toRating ratingChange becameToRepair fromToRepair toToRepair
        fromDescription toDescription fromMaterial toMaterial fromItemId toItemId
        fromPhotos { storageReference url contentType }
        toPhotos { storageReference url }
      }
    }
  }
}`

type comparedItem struct {
	Name, Change                       string
	FromRating, ToRating, RatingChange *int
	BecameToRepair                     bool
	FromDescription, ToDescription     *string
	FromMaterial, ToMaterial           *string
	FromItemID                         *string `json:"fromItemId"`
	ToItemID                           *string `json:"toItemId"`
	FromPhotos, ToPhotos               []struct{ StorageReference, URL, ContentType string }
}

type comparison struct {
	InventoryComparison struct {
		From, To struct {
			ID                string
			InventoryTypeName string
			Environments      []struct {
				Name  string
				Items []struct{ Name string }
			}
		}
		Summary      summaryCounts
		Environments []struct {
			Name, Presence                     string
			Level                              int
			FromEnvironmentID, ToEnvironmentID *string `json:"-"`
			Items                              []comparedItem
		}
	}
}

// summaryCounts is a comparison's summary: its counts by name (its id, which
// the IDE's document selects for caches, aside).
type summaryCounts map[string]int

func (s *summaryCounts) UnmarshalJSON(b []byte) error {
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	*s = summaryCounts{}
	for name, v := range fields {
		if n, ok := v.(float64); ok {
			(*s)[name] = int(n)
		}
	}
	return nil
}

// A move-in and its move-out compare item by item: rooms and items matched by
// name whatever the case, accents and spaces (several of a name in their
// order), each kind of change, the summary, and the photos of both sides.
func TestComparisonMatchesItemsAcrossAMoveInAndAMoveOut(t *testing.T) {
	var counter testdb.Counter
	st := testdb.Open(t, counter.Option())
	company := uuid.New()
	moveIn, moveOut, _ := apitest.ComparisonFixture(t, st.Client, company)
	srv := apitest.NewServer(t, st, nil)

	counter.Reset()
	var got comparison
	srv.MustData(t, company.String(), comparisonQuery, map[string]any{"from": moveIn, "to": moveOut}, &got)
	c := got.InventoryComparison
	// Constant: the comparison's five (inventories, environments, items,
	// materials, photos), and one per level of each side's own tree.
	if n := counter.Count(); n > 10 {
		t.Errorf("the comparison took %d statements, want at most 10:\n%s", n, counter.Statements())
	}
	if c.From.ID != moveIn.String() || c.To.ID != moveOut.String() || c.From.InventoryTypeName == "" || len(c.To.Environments) != 3 {
		t.Errorf("from/to: %+v %+v", c.From, c.To)
	}
	want := map[string]int{"unchanged": 3, "worse": 1, "better": 1, "added": 2, "removed": 2, "newlyToRepair": 2}
	for k, v := range want {
		if c.Summary[k] != v {
			t.Errorf("summary %s = %d, want %d (%v)", k, c.Summary[k], v, c.Summary)
		}
	}
	var rooms []string
	for _, e := range c.Environments {
		rooms = append(rooms, e.Name+":"+e.Presence)
	}
	if strings.Join(rooms, " ") != "sala :BOTH Habitacion:BOTH Cocina:ADDED Baño:REMOVED" {
		t.Errorf("rooms %v: want the move-out's in its order, then the removed one", rooms)
	}
	var changes []string
	for _, it := range c.Environments[0].Items {
		changes = append(changes, it.Name+":"+it.Change)
	}
	if strings.Join(changes, " ") != "piso:WORSE Puerta:UNCHANGED Ventana:BETTER VENTANA:UNCHANGED Cortina:ADDED Lámpara:REMOVED" {
		t.Errorf("the living room's items: %v", changes)
	}
	piso := c.Environments[0].Items[0]
	if *piso.FromRating != 4 || *piso.ToRating != 2 || *piso.RatingChange != -2 || !piso.BecameToRepair ||
		*piso.FromDescription != "Piso en Sala" || *piso.ToDescription != "piso en sala " || piso.FromMaterial == nil ||
		len(piso.FromPhotos) != 1 || len(piso.ToPhotos) != 1 || piso.FromPhotos[0].StorageReference == piso.ToPhotos[0].StorageReference ||
		!strings.Contains(piso.FromPhotos[0].URL, "signature=") || piso.FromPhotos[0].ContentType != "image/jpeg" {
		b, _ := json.Marshal(piso)
		t.Errorf("the worsened floor: %s", b)
	}
	cortina, lampara := c.Environments[0].Items[4], c.Environments[0].Items[5]
	if cortina.FromRating != nil || cortina.FromItemID != nil || cortina.RatingChange != nil || !cortina.BecameToRepair || len(cortina.FromPhotos) != 0 ||
		lampara.ToRating != nil || lampara.ToItemID != nil || lampara.BecameToRepair || len(lampara.ToPhotos) != 0 || *lampara.FromRating != 4 {
		t.Errorf("added %+v, removed %+v: want only the side each is in", cortina, lampara)
	}
}

// Two inventories of different properties are refused; another company's
// inventory reads as not found, as a missing one does.
func TestComparisonRefusesOtherPropertiesAndOtherCompanies(t *testing.T) {
	st := testdb.Open(t)
	company, other := uuid.New(), uuid.New()
	moveIn, _, _ := apitest.ComparisonFixture(t, st.Client, company)
	_, secondProperty, _ := apitest.ComparisonFixture(t, st.Client, company)
	_, othersMoveOut, _ := apitest.ComparisonFixture(t, st.Client, other)
	srv := apitest.NewServer(t, st, nil)
	for name, tc := range map[string]struct {
		from, to uuid.UUID
		code     string
	}{
		"different properties": {moveIn, secondProperty, "INVALID_ARGUMENT"},
		"another company's":    {moveIn, othersMoveOut, "NOT_FOUND"},
		"missing":              {moveIn, uuid.New(), "NOT_FOUND"},
	} {
		res := srv.GraphQL(t, company.String(), comparisonQuery, map[string]any{"from": tc.from, "to": tc.to})
		if len(res.Errors) != 1 || res.Errors[0].Code() != tc.code {
			t.Errorf("%s: %+v, want one %s", name, res.Errors, tc.code)
		}
		// The refusal names the argument to change.
		if tc.code == "INVALID_ARGUMENT" && (len(res.Errors) != 1 || res.Errors[0].Extensions["field"] != "to") {
			t.Errorf("%s: %+v, want extensions.field \"to\"", name, res.Errors)
		}
	}
	res := srv.GraphQL(t, other.String(), comparisonQuery, map[string]any{"from": moveIn, "to": othersMoveOut})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("the other company asking for this one's: %+v, want NOT_FOUND", res.Errors)
	}
}

// The comparison's statements do not grow with the inventories: one room of
// one item each, and six rooms of ten, cost the same.
func TestComparisonCostsTheSameStatementsForAnySize(t *testing.T) {
	counts := map[int]int{}
	for _, rooms := range []int{1, 6} {
		var counter testdb.Counter
		st := testdb.Open(t, counter.Option())
		company := uuid.New()
		from, to := apitest.LargeComparisonFixture(t, st.Client, company, rooms, rooms*rooms/3+1)
		srv := apitest.NewServer(t, st, nil)
		counter.Reset()
		var got comparison
		srv.MustData(t, company.String(), comparisonQuery, map[string]any{"from": from, "to": to}, &got)
		counts[rooms] = counter.Count()
		if n := len(got.InventoryComparison.Environments); n != rooms {
			t.Errorf("%d rooms compared, want %d", n, rooms)
		}
	}
	if counts[1] != counts[6] {
		t.Errorf("statements: %d for one room, %d for six: want the same", counts[1], counts[6])
	}
}

// BenchmarkComparison compares two inventories of 60 items each (6 rooms of
// 10, a photo each, every third item worse) over real HTTP, on SQLite or on
// PostgreSQL when TEST_DATABASE_URL is set.
func BenchmarkComparison(b *testing.B) {
	var counter testdb.Counter
	st := testdb.Open(b, counter.Option())
	from, to := apitest.LargeComparisonFixture(b, st.Client, uuid.MustParse(companyA), 6, 10)
	srv := apitest.NewServer(b, st, nil)
	vars := map[string]any{"from": from, "to": to}
	counter.Reset()
	if res := srv.GraphQL(b, companyA, comparisonQuery, vars); len(res.Errors) > 0 {
		b.Fatal(res.Errors)
	}
	statements := counter.Count()
	body, _ := json.Marshal(map[string]any{"query": comparisonQuery, "variables": vars})
	b.ReportAllocs()
	for b.Loop() {
		post(b, srv.URL+"/graphql", body)
	}
	b.ReportMetric(float64(statements), "statements/op")
}

// The demo data gives each property a history: the IDE's comparison tab opens
// on two inventories of one of them, which compare, and across the demo's
// properties the consecutive inspections show every kind of change.
func TestTheDemoHistoryComparesAndTheIDEOpensOnIt(t *testing.T) {
	_, st := demo(t)
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), IDECompany: uuid.MustParse(companyA)})
	res, body := srv.Get(t, "/", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "CompareInventories") {
		t.Fatalf("the IDE page: %d, without the comparison tab", res.StatusCode)
	}
	var ids []string
	for _, name := range []string{"from", "to"} {
		m := regexp.MustCompile(name + `[^0-9a-f]{1,24}(` + uuidPattern.String() + `)`).FindStringSubmatch(string(body))
		if m == nil {
			t.Fatalf("the IDE page has no %q inventory in its comparison tab", name)
		}
		ids = append(ids, m[1])
	}
	var opened comparison
	srv.MustData(t, companyA, ide.ComparisonQuery, map[string]any{"from": ids[0], "to": ids[1]}, &opened)
	if len(opened.InventoryComparison.Environments) == 0 {
		t.Error("the IDE's comparison compares no rooms")
	}
	// As its comment says: a move-in and the move-out of one tenancy, no
	// other move-in of the property between them.
	ctx := tenant.WithCompany(context.Background(), uuid.MustParse(companyA))
	in, err := st.Client.Inventory.Get(ctx, uuid.MustParse(ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Client.Inventory.Get(ctx, uuid.MustParse(ids[1]))
	if err != nil {
		t.Fatal(err)
	}
	between, err := st.Client.Inventory.Query().Where(inventory.PropertyID(in.PropertyID), inventory.InventoryTypeEQ(inventorytype.Colocacion),
		inventory.CreatedAtGT(in.CreatedAt), inventory.CreatedAtLT(out.CreatedAt)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.InventoryType != inventorytype.Colocacion || out.InventoryType != inventorytype.Desocupacion ||
		in.PropertyID != out.PropertyID || !in.CreatedAt.Before(out.CreatedAt) || between != 0 {
		t.Errorf("the IDE's comparison opens on a %s then a %s (same property %v, %d move-ins between); want a move-in and the move-out of its tenancy",
			in.InventoryType, out.InventoryType, in.PropertyID == out.PropertyID, between)
	}

	var list struct {
		Properties struct {
			Edges []struct {
				Node struct {
					Inventories struct {
						Edges []struct {
							Node struct{ ID, InventoryType string }
						}
					}
				}
			}
		}
	}
	srv.MustData(t, companyA, `{ properties(first: 20) { edges { node {
		inventories(first: 3, orderBy: {field: CREATED_AT, direction: ASC}) { edges { node { id inventoryType } } } } } } }`, nil, &list)
	total := map[string]int{}
	moveOuts := 0
	for _, p := range list.Properties.Edges {
		invs := p.Node.Inventories.Edges
		for i := 1; i < len(invs); i++ {
			if invs[i-1].Node.InventoryType == "COLOCACION" && invs[i].Node.InventoryType == "DESOCUPACION" {
				moveOuts++
			}
			var got comparison
			srv.MustData(t, companyA, comparisonQuery, map[string]any{"from": invs[i-1].Node.ID, "to": invs[i].Node.ID}, &got)
			for k, v := range got.InventoryComparison.Summary {
				total[k] += v
			}
		}
	}
	for _, kind := range []string{"unchanged", "worse", "better", "added", "removed", "newlyToRepair"} {
		if total[kind] == 0 {
			t.Errorf("no %s item across the demo's histories: %v", kind, total)
		}
	}
	if moveOuts == 0 {
		t.Error("no demo property has a move-in (colocación) followed by its move-out (desocupación)")
	}
	if total["unchanged"] < total["worse"]+total["better"] {
		t.Errorf("the demo's inspections change more items than they keep: %v", total)
	}
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// The IDE's third tab makes and signs an inventory on the demo data: its
// operations, run with its variables as the IDE would, make one and sign it
// for both parties; run again, they make nothing twice.
func TestTheIDEMakesAndSignsAnInventory(t *testing.T) {
	_, st := demo(t)
	srv := apitest.NewServerWith(t, st, server.Options{Files: apitest.Files(t), IDECompany: uuid.MustParse(companyA)})
	_, body := srv.Get(t, "/", nil)
	for _, want := range []string{"CreateInventory", "SignAsAgent", "SignAsOwner"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("the IDE page has no %s in its capture tab", want)
		}
	}
	ctx := tenant.WithCompany(context.Background(), uuid.MustParse(companyA))
	property, err := st.Client.Property.Query().FirstID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), property.String()) {
		t.Fatalf("the capture tab does not name the company's property %s", property)
	}
	it, err := st.Client.Item.Query().WithMaterial().First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vars := ide.CaptureVariables(ide.Examples{Property: property, Material: it.Edges.Material.ID})
	run := func(operation string) map[string]any {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": ide.CaptureQuery, "operationName": operation, "variables": vars})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Company-Id", companyA)
		got, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer got.Body.Close()
		var out struct {
			Data   map[string]any
			Errors []any
		}
		if err := json.NewDecoder(got.Body).Decode(&out); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%s: %v %v", operation, out.Errors, err)
		}
		return out.Data
	}
	for range 2 {
		run("CreateInventory")
		run("SignAsAgent")
		signed := run("SignAsOwner")["signInventory"].(map[string]any)["inventory"].(map[string]any)
		if signed["isSigned"] != true || signed["isRemoteSigned"] != true || signed["pdfSha256"] == nil {
			t.Errorf("the capture tab's inventory after both signatures: %v", signed)
		}
	}
}
