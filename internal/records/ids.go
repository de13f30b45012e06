package records

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// IDIndex tells which table each existing id is in, across every type and
// every company (internal/store's NodeTables, one statement): what shows
// that an id a write gives is taken.
type IDIndex interface {
	NodeTables(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]string, error)
}

// givenID is an id a write gives a new record, and where the input gives
// it: field, or the id of environment env (item -1) or of its item item;
// the path is written out only for a refusal.
type givenID struct {
	id        uuid.UUID
	field     string
	env, item int
}

func (g givenID) path() string {
	switch {
	case g.field != "":
		return g.field
	case g.item < 0:
		return fmt.Sprintf("%s[%d].%s", APINames.Environments, g.env, APINames.EnvironmentID)
	}
	return fmt.Sprintf("%s[%d].%s[%d].%s", APINames.Environments, g.env, APINames.Items, g.item, APINames.ItemID)
}

// idsAtOnce bounds the ids of one look-up: each is a bind parameter per
// table, and SQLite takes at most 32,766.
const idsAtOnce = 1000

// checkIDsUnused refuses the first id of given that names a record already:
// an id names one record in the whole API (node, A1 and B2 find a record by
// its id alone), whatever its type and its company. The refusal is the same
// whether the record is the caller's or another company's (idInUse), so that
// no caller learns that a UUID exists elsewhere.
func (s *Service) checkIDsUnused(ctx context.Context, given []givenID) error {
	taken, _, err := s.firstTaken(ctx, given)
	if err != nil || taken == nil {
		return err
	}
	return idInUse(taken.path(), taken.id)
}

// firstTaken is the first id of given that names a record already, and the
// table of that record (IDIndex's name); nil when none does, or when s has
// no IDIndex.
func (s *Service) firstTaken(ctx context.Context, given []givenID) (*givenID, string, error) {
	if s.ids == nil || len(given) == 0 {
		return nil, "", nil
	}
	for start := 0; start < len(given); start += idsAtOnce {
		batch := given[start:min(start+idsAtOnce, len(given))]
		ids := make([]uuid.UUID, len(batch))
		for i, g := range batch {
			ids[i] = g.id
		}
		found, err := s.ids.NodeTables(ctx, ids)
		if err != nil {
			return nil, "", err
		}
		for i, g := range batch {
			if table, taken := found[g.id]; taken {
				return &batch[i], table, nil
			}
		}
	}
	return nil, "", nil
}

// idInUse is the refusal of an id that names a record already: CONFLICT, in
// the same words for a record of the caller's and one of another company.
func idInUse(field string, id uuid.UUID) *apperr.Error {
	return &apperr.Error{Code: apperr.Conflict, Field: field,
		Message: fmt.Sprintf("%s is already the id of a record: an id names one record, so give the new record another id, or leave it out to have one drawn (an inventory of yours changes with updateInventory)", id)}
}

// treeIDs are the ids of inv's environments and items, with where the input
// gives each, but those a change keeps: the ids of the inventory's own
// environments given as environments (keepEnvs) and of its items given as
// items (keepItems).
func treeIDs(inv *Inventory, keepEnvs, keepItems map[uuid.UUID]bool) []givenID {
	var given []givenID
	for i, env := range inv.Environments {
		if !keepEnvs[env.ID] {
			given = append(given, givenID{id: env.ID, env: i, item: -1})
		}
		for j, it := range env.Items {
			if !keepItems[it.ID] {
				given = append(given, givenID{id: it.ID, env: i, item: j})
			}
		}
	}
	return given
}
