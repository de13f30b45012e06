package graph_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/datagen"
	inventoryrecords "github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/timeline"
)

// A property's timeline holds each of its inventories' events, oldest
// first, and a page of properties asking for theirs costs two statements
// more than without (the inventories, the changes): not two per property.
func TestTimelinesAreOldestFirstAndReadInTwoStatements(t *testing.T) {
	var counter testdb.Counter
	srv, _ := demo(t, counter.Option())
	type event struct {
		At, Kind, InventoryID, InventoryType string
	}
	var with struct {
		Properties struct {
			Edges []struct {
				Node struct {
					Inventories struct {
						Edges []struct {
							Node struct {
								ID                                                    string
								CreatedAt                                             string
								IsSigned, IsRemoteSigned                              bool
								AgentSignatureDate, OwnerSignatureDate, SignatureDate *string
							}
						}
					}
					Timeline []event
				}
			}
		}
	}
	const page = `{ properties(first: 20) { edges { node { inventories(first: 100) { edges { node {
		id createdAt isSigned isRemoteSigned agentSignatureDate ownerSignatureDate signatureDate } } } %s } } } }`
	counter.Reset()
	srv.MustData(t, companyA, fmt.Sprintf(page, ""), nil, &struct{}{})
	without := counter.Count()
	counter.Reset()
	srv.MustData(t, companyA, fmt.Sprintf(page, "timeline { at kind inventoryId inventoryType }"), nil, &with)
	if n := counter.Count(); n != without+2 {
		t.Errorf("timelines of 20 properties cost %d statements more, want 2:\n%s", n-without, counter.Statements())
	}

	kinds := map[string]int{}
	for _, p := range with.Properties.Edges {
		want := 0
		for _, e := range p.Node.Inventories.Edges {
			inv := e.Node
			want++ // created
			for _, d := range []*string{inv.AgentSignatureDate, inv.OwnerSignatureDate} {
				if d != nil {
					want++
				}
			}
			if inv.IsSigned {
				want++
				if inv.IsRemoteSigned {
					want++
				}
			}
		}
		got := p.Node.Timeline
		if len(got) != want || len(got) == 0 {
			t.Errorf("a property of %d inventories has %d events, want %d", len(p.Node.Inventories.Edges), len(got), want)
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].At < got[j].At }) {
			t.Errorf("timeline not oldest first: %v", got)
		}
		for _, e := range got {
			kinds[e.Kind]++
		}
	}
	for _, k := range []string{"INVENTORY_CREATED", "AGENT_SIGNED", "OWNER_SIGNED", "FULLY_SIGNED", "REMOTE_SIGNED"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in the demo's timelines: %v", k, kinds)
		}
	}
}

// Each inventory's previous is the same property's inventory created just
// before it (null for the first), and a page of inventories asking for
// theirs, with a nested selection below, costs a constant two statements
// more than without.
func TestPreviousIsTheInventoryBeforeAndReadForAWholePage(t *testing.T) {
	var counter testdb.Counter
	srv, _ := demo(t, counter.Option())
	const page = `{ properties(first: 10) { edges { node { id inventories(first: 10, orderBy: {field: CREATED_AT, direction: ASC}) {
		edges { node { id createdAt %s } } } } } } }`
	var with struct {
		Properties struct {
			Edges []struct {
				Node struct {
					Inventories struct {
						Edges []struct {
							Node struct {
								ID       string
								Previous *struct {
									ID           string
									Environments []struct{ Items []struct{ ID string } }
								}
							}
						}
					}
				}
			}
		}
	}
	counter.Reset()
	srv.MustData(t, companyA, fmt.Sprintf(page, ""), nil, &struct{}{})
	without := counter.Count()
	counter.Reset()
	srv.MustData(t, companyA, fmt.Sprintf(page, "previous { id environments { items { id } } }"), nil, &with)
	// Two for the predecessors (their ids, then their rows), and one per
	// level below them (environments, items).
	if n := counter.Count() - without; n != 4 {
		t.Errorf("previous on every inventory of 10 properties cost %d statements more, want 4:\n%s", n, counter.Statements())
	}
	checked := 0
	for _, p := range with.Properties.Edges {
		invs := p.Node.Inventories.Edges
		for i, e := range invs {
			switch {
			case i == 0 && e.Node.Previous != nil:
				t.Errorf("the first inventory %s has a previous %s", e.Node.ID, e.Node.Previous.ID)
			case i > 0 && (e.Node.Previous == nil || e.Node.Previous.ID != invs[i-1].Node.ID):
				t.Errorf("inventory %s: previous %+v, want %s", e.Node.ID, e.Node.Previous, invs[i-1].Node.ID)
			case i > 0 && len(e.Node.Previous.Environments) == 0:
				t.Errorf("inventory %s: its previous came without its rooms", e.Node.ID)
			case i > 0:
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no inventory with a previous one was checked")
	}
}

const timelineQuery = `query($id: ID!) { node(id: $id) { ... on Property { timeline { at kind inventoryId itemId photoId version by } } } }`

type timelineEvent struct {
	At, Kind, InventoryID string
	ItemID, PhotoID       *string
	Version               *int
	By                    *string
}

// timelineOf is the events of inventory in the timeline of property, as
// company reads it.
func timelineOf(t *testing.T, srv *apitest.Server, company, property, inventory string) []timelineEvent {
	t.Helper()
	var got struct {
		Node struct{ Timeline []timelineEvent }
	}
	srv.MustData(t, company, timelineQuery, map[string]any{"id": property}, &got)
	var mine []timelineEvent
	for _, e := range got.Node.Timeline {
		if e.InventoryID == inventory {
			mine = append(mine, e)
		}
	}
	return mine
}

// Every accepted write of an inventory shows in its property's timeline,
// in the order written, with what it touched: a retry that writes nothing
// and a refused write show nothing.
func TestEveryWriteShowsInThePropertysTimeline(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 2))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	item := made.Environments[0].Items[0].ID
	kept, dropped := uuid.NewString(), uuid.NewString()
	for _, id := range []string{kept, kept, dropped} { // the second is a phone's retry
		if status, _, errs := upload(t, w.srv, companyA, map[string]any{"itemId": item, "photoId": id}, aJPEG(t), preflight); status != 200 || len(errs) > 0 {
			t.Fatalf("addItemPhoto: HTTP %d %v", status, errs)
		}
	}
	if errs := w.srv.GraphQL(t, companyA, `mutation($id: ID!) { removeItemPhoto(photoId: $id) { photoId } }`, map[string]any{"id": dropped}).Errors; len(errs) > 0 {
		t.Fatal(errs)
	}
	changed, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version, "rentalPrice": "2000000.00"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, errs := w.update(t, map[string]any{"id": made.ID, "expectedVersion": made.Version, "rentalPrice": "1.00"}); !refused(errs, "CONFLICT", "expectedVersion") {
		t.Fatalf("a stale update: %v; want CONFLICT", errs)
	}
	for _, sig := range []map[string]any{
		{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez", "remote": true},
		{"inventoryId": made.ID, "party": "AGENT", "signerName": "Ana Gómez", "remote": true}, // a retry
		{"inventoryId": made.ID, "party": "OWNER", "signerName": "Luis Pérez"},
	} {
		if _, errs := w.sign(t, companyA, sig); len(errs) > 0 {
			t.Fatal(errs)
		}
	}

	got := timelineOf(t, w.srv, companyA, w.property, made.ID)
	want := []string{"INVENTORY_CREATED", "PHOTO_ADDED", "PHOTO_ADDED", "PHOTO_REMOVED", "INVENTORY_UPDATED",
		"AGENT_SIGNED", "OWNER_SIGNED", "FULLY_SIGNED", "REMOTE_SIGNED"}
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("timeline of the inventory: %v, want %v", kinds, want)
	}
	for i, photo := range []string{kept, dropped, dropped} {
		e := got[1+i]
		if e.ItemID == nil || *e.ItemID != item || e.PhotoID == nil || *e.PhotoID != photo || e.Version != nil {
			t.Errorf("%s: item %v photo %v version %v; want item %s photo %s", e.Kind, e.ItemID, e.PhotoID, e.Version, item, photo)
		}
	}
	if e := got[4]; e.Version == nil || *e.Version != changed.Version || e.ItemID != nil || e.By != nil {
		t.Errorf("INVENTORY_UPDATED: version %v item %v by %v; want version %d, no item, no name in header mode", e.Version, e.ItemID, e.By, changed.Version)
	}
	if !slices.IsSortedFunc(got, func(a, b timelineEvent) int { return strings.Compare(a.At, b.At) }) {
		t.Errorf("not oldest first: %v", got)
	}
	// Another company learns nothing of it.
	var theirs struct {
		Node *struct{ Timeline []timelineEvent }
	}
	srv := w.srv
	srv.MustData(t, companyB, timelineQuery, map[string]any{"id": w.property}, &theirs)
	if theirs.Node != nil {
		t.Errorf("company B reads company A's timeline: %+v", theirs.Node)
	}
}

// A timeline holds a property's MaxChanges most recent changes, read with
// the rest in the same two statements.
func TestATimelineKeepsTheMostRecentChanges(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx := tenant.Unrestricted(context.Background(), "test: more changes than a timeline holds")
	inv := uuid.MustParse(made.ID)
	for v := 2; v < timeline.MaxChanges+12; v++ {
		if err := inventoryrecords.Record(ctx, w.st.Client, inventoryrecords.Event{Kind: recordevent.KindInventoryUpdated, CompanyID: datagen.DemoCompanies[0],
			PropertyID: uuid.MustParse(w.property), InventoryID: inv, Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	got := timelineOf(t, w.srv, companyA, w.property, made.ID)
	if len(got) != 1+timeline.MaxChanges || got[0].Kind != "INVENTORY_CREATED" || got[1].Version == nil || *got[1].Version != 12 ||
		*got[len(got)-1].Version != timeline.MaxChanges+11 {
		t.Fatalf("%d events, the first %+v; want creation and the %d most recent changes (versions 12 to %d)",
			len(got), got[:2], timeline.MaxChanges, timeline.MaxChanges+11)
	}
}
