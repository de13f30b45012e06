package webhooks

import (
	"io"
	"strconv"
	"strings"

	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
)

// Kind is an event an endpoint subscribes to (GraphQL's WebhookEventKind):
// the kinds of inventoryEvents, spelled as InventoryEventKind spells them.
type Kind string

// kinds are the record events' kinds an endpoint may be sent, as
// internal/live names them for inventoryEvents.
var kinds = map[recordevent.Kind]Kind{
	recordevent.KindInventoryCreated:   "INVENTORY_CREATED",
	recordevent.KindInventoryUpdated:   "INVENTORY_UPDATED",
	recordevent.KindPhotoAdded:         "PHOTO_ADDED",
	recordevent.KindPhotoRemoved:       "PHOTO_REMOVED",
	recordevent.KindAgentSigned:        "AGENT_SIGNED",
	recordevent.KindOwnerSigned:        "OWNER_SIGNED",
	recordevent.KindTenantSigned:       "TENANT_SIGNED",
	recordevent.KindFullySigned:        "FULLY_SIGNED",
	recordevent.KindPdfStored:          "PDF_READY",
	recordevent.KindInventoryCorrected: "INVENTORY_CORRECTED",
	recordevent.KindSignatureRequested: "SIGNATURE_REQUESTED",
}

// The repair list's changes (repairEvents' FLAGGED and REPAIRED), which
// a signature or a correction makes: one delivery per item changed.
const (
	RepairFlagged  Kind = "REPAIR_FLAGGED"
	RepairRepaired Kind = "REPAIR_REPAIRED"
)

// repairsChangeWith are the record events that may change the repair list.
var repairsChangeWith = map[recordevent.Kind]bool{recordevent.KindFullySigned: true, recordevent.KindInventoryCorrected: true}

// KindOf is the kind an endpoint subscribes to for a record event's kind.
func KindOf(k recordevent.Kind) (Kind, bool) {
	kind, ok := kinds[k]
	return kind, ok
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
	for _, v := range kinds {
		if v == k {
			return true
		}
	}
	return false
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
