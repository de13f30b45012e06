package graph_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// A property's timeline holds each of its inventories' events, oldest
// first, and a page of properties asking for theirs costs one statement
// more than without: not one per property.
func TestTimelinesAreOldestFirstAndReadInOneStatement(t *testing.T) {
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
	if n := counter.Count(); n != without+1 {
		t.Errorf("timelines of 20 properties cost %d statements more, want 1:\n%s", n-without, counter.Statements())
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
