package graph_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// Every time in an answer has one form whatever wrote it (issue 38): RFC
// 3339 in UTC with three digits of milliseconds, the generator's whole
// seconds and a creation's clock alike; and a time sent back in a filter
// finds the record it came from, since the store keeps times to the
// millisecond too.
func TestEveryTimeInAnAnswerHasMilliseconds(t *testing.T) {
	w := newWrites(t)
	id := uuid.NewString()
	var created struct {
		CreateInventory struct {
			Inventory struct{ ID, CreatedAt, UpdatedAt string }
		}
	}
	w.srv.MustData(t, companyA, `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id createdAt updatedAt } } }`,
		map[string]any{"input": w.tree(id, 1, 1)}, &created)
	var list struct {
		Inventories struct {
			Edges []struct {
				Node struct {
					ID, CreatedAt string
					SignatureDate *string
				}
			}
		}
	}
	w.srv.MustData(t, companyA, `{ inventories(first: 30) { edges { node { id createdAt signatureDate } } } }`, nil, &list)
	times := []string{created.CreateInventory.Inventory.CreatedAt, created.CreateInventory.Inventory.UpdatedAt}
	for _, e := range list.Inventories.Edges {
		times = append(times, e.Node.CreatedAt)
		if e.Node.SignatureDate != nil {
			times = append(times, *e.Node.SignatureDate)
		}
	}
	milliseconds := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for _, at := range times {
		if !milliseconds.MatchString(at) {
			t.Errorf("a time in an answer: %q; want RFC 3339, UTC, with milliseconds", at)
		}
	}
	var found struct {
		Inventories struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	w.srv.MustData(t, companyA, `query($at: Time!) { inventories(first: 10, where: {createdAtGTE: $at, createdAtLTE: $at}) { edges { node { id } } } }`,
		map[string]any{"at": created.CreateInventory.Inventory.CreatedAt}, &found)
	var ids []string
	for _, e := range found.Inventories.Edges {
		ids = append(ids, e.Node.ID)
	}
	if !slices.Contains(ids, id) {
		t.Errorf("createdAt %s sent back as a filter finds %v; want the inventory it came from (%s)", created.CreateInventory.Inventory.CreatedAt, ids, id)
	}
}
