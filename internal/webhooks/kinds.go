package webhooks

import (
	"io"
	"strconv"
	"strings"

	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/live"
)

// Kind is an event an endpoint subscribes to (GraphQL's WebhookEventKind):
// the kinds of inventoryEvents, spelled as InventoryEventKind spells them.
type Kind string

// The repair list's changes (repairEvents' FLAGGED and REPAIRED), which
// a signature or a correction makes: one delivery per item changed.
const (
	RepairFlagged  Kind = "REPAIR_FLAGGED"
	RepairRepaired Kind = "REPAIR_REPAIRED"
)

// repairsChangeWith are the record events that may change the repair list.
var repairsChangeWith = map[recordevent.Kind]bool{recordevent.KindFullySigned: true, recordevent.KindInventoryCorrected: true}

// KindOf is the kind an endpoint subscribes to for a record event's kind:
// inventoryEvents' name for it (live.KindOf), the one place of that map.
func KindOf(k recordevent.Kind) (Kind, bool) {
	kind, ok := live.KindOf(k)
	return Kind(kind), ok
}

// Type is the payload's type, as Standard Webhooks' dotted types go:
// "inventory." and the kind in lower case (inventory.fully_signed), or
// repair.flagged and repair.repaired.
func (k Kind) Type() string {
	if rest, ok := strings.CutPrefix(string(k), "REPAIR_"); ok {
		return "repair." + strings.ToLower(rest)
	}
	return "inventory." + strings.ToLower(string(k))
}

func known(k Kind) bool {
	if k == RepairFlagged || k == RepairRepaired {
		return true
	}
	return live.Kind(k).Sent()
}

// MarshalGQL writes the kind as its GraphQL enum value.
func (k Kind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *Kind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if !known(Kind(s)) {
		return apperr.Errorf(apperr.Invalid, "%v is not a WebhookEventKind", v)
	}
	*k = Kind(s)
	return nil
}
