package live

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Kind is what an event tells (GraphQL's InventoryEventKind).
type Kind string

const (
	Created      Kind = "INVENTORY_CREATED"
	Updated      Kind = "INVENTORY_UPDATED"
	PhotoAdded   Kind = "PHOTO_ADDED"
	PhotoRemoved Kind = "PHOTO_REMOVED"
	AgentSigned  Kind = "AGENT_SIGNED"
	OwnerSigned  Kind = "OWNER_SIGNED"
	TenantSigned Kind = "TENANT_SIGNED"
	FullySigned  Kind = "FULLY_SIGNED"
	PDFReady     Kind = "PDF_READY"
	Corrected    Kind = "INVENTORY_CORRECTED"
	// SignatureRequested: a link was issued for a party to sign from.
	SignatureRequested Kind = "SIGNATURE_REQUESTED"
	// Refetch: the events asked to resume from are no longer kept; read
	// what the screen shows again, then follow the events from here.
	Refetch Kind = "REFETCH"
)

var kinds = map[recordevent.Kind]Kind{
	recordevent.KindInventoryCreated:   Created,
	recordevent.KindInventoryUpdated:   Updated,
	recordevent.KindPhotoAdded:         PhotoAdded,
	recordevent.KindPhotoRemoved:       PhotoRemoved,
	recordevent.KindAgentSigned:        AgentSigned,
	recordevent.KindOwnerSigned:        OwnerSigned,
	recordevent.KindTenantSigned:       TenantSigned,
	recordevent.KindFullySigned:        FullySigned,
	recordevent.KindPdfStored:          PDFReady,
	recordevent.KindInventoryCorrected: Corrected,
	recordevent.KindSignatureRequested: SignatureRequested,
}

// KindOf is the name inventoryEvents gives a record event's kind (webhooks
// name their events alike); false for a kind it does not send.
func KindOf(k recordevent.Kind) (Kind, bool) {
	kind, ok := kinds[k]
	return kind, ok
}

// Sent reports whether k is a kind inventoryEvents sends for a record event
// (REFETCH is not one).
func (k Kind) Sent() bool {
	for _, known := range kinds {
		if k == known {
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
	if Kind(s).Sent() {
		*k = Kind(s)
		return nil
	}
	if Kind(s) == Refetch {
		*k = Refetch
		return nil
	}
	return apperr.Errorf(apperr.Invalid, "%v is not an InventoryEventKind", v)
}

// Event is one event as a subscriber receives it (GraphQL's
// InventoryEvent). Refetch has no records.
type Event struct {
	Cursor                                   string
	At                                       time.Time
	Kind                                     Kind
	PropertyID, InventoryID, ItemID, PhotoID *uuid.UUID
	Version                                  *int
	By                                       *string
	// Recorded is the record event's kind (records.SignedIn reads the
	// party of a signature's); none for REFETCH.
	Recorded recordevent.Kind
}

func eventOf(ev *ent.RecordEvent) *Event {
	return &Event{Cursor: strconv.FormatInt(ev.ID, 10), At: ev.At.UTC(), Kind: kinds[ev.Kind], PropertyID: &ev.PropertyID,
		InventoryID: &ev.InventoryID, ItemID: ev.ItemID, PhotoID: ev.PhotoID, Version: ev.Version, By: ev.Actor, Recorded: ev.Kind}
}

// Filter narrows a subscription to one property or one inventory.
type Filter struct{ Property, Inventory *uuid.UUID }

func (f Filter) matches(ev *ent.RecordEvent) bool {
	return (f.Property == nil || *f.Property == ev.PropertyID) && (f.Inventory == nil || *f.Inventory == ev.InventoryID)
}

// InventoryEvents is the subscription inventoryEvents: the events of the
// caller's company that f matches, from the cursor after (when given) on,
// until ctx ends or the subscriber falls behind. The Hub hands each event
// straight to the subscription's channel: an idle subscription costs no
// goroutine beyond gqlgen's.
func (h *Hub) InventoryEvents(ctx context.Context, f Filter, after *string) (<-chan *Event, error) {
	company, from, err := start(ctx, after)
	if err != nil {
		return nil, err
	}
	release, err := holdPlace(ctx)
	if err != nil {
		return nil, err
	}
	// Registered before the replay is read, holding what comes meanwhile;
	// then, under the Hub's lock, the replay and what was held go out in
	// order, and the Hub hands over the rest as it comes.
	var (
		out     chan *Event
		pending []*ent.RecordEvent
		holding = true
		last    = from
	)
	sub := &Subscriber{hub: h, company: company}
	sub.offer = func(ev *ent.RecordEvent) bool {
		if holding {
			pending = append(pending, ev)
			return len(pending) <= h.opts.Buffer
		}
		if ev.ID <= last || !f.matches(ev) {
			return true
		}
		select {
		case out <- eventOf(ev):
			return true
		default:
			return false
		}
	}
	sub.onCut = func() {
		if out != nil { // else the subscription is refused as it starts
			addError(ctx, fellBehind(h.opts.Buffer))
			close(out)
		}
	}
	replay, followFrom, refetchAt, err := h.begin(ctx, sub, after, from, release)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub.gone { // cut while the replay was read
		release()
		return nil, &apperr.Error{Code: apperr.RateLimited, Message: fellBehind(h.opts.Buffer).Message}
	}
	room := h.opts.Buffer + len(replay)
	if refetchAt != nil {
		room++
	}
	out = make(chan *Event, room)
	if refetchAt != nil {
		out <- &Event{Cursor: strconv.FormatInt(*refetchAt, 10), At: time.Now().UTC(), Kind: Refetch}
	}
	for _, ev := range replay {
		if f.matches(ev) {
			out <- eventOf(ev)
		}
	}
	last = followFrom
	holding = false
	for _, ev := range pending {
		if !sub.offer(ev) {
			h.dropped.Add(1)
			h.cutOff(sub)
			break
		}
	}
	pending = nil
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.remove(sub) {
			close(out)
		}
		release()
	})
	return out, nil
}

// addError says why a subscription ends, where the transport can: in a
// graphql-transport-ws error message. gqlgen's SSE transport has no place
// for it (its stream just completes), and AddSubscriptionError then finds
// nothing to add to and panics; that is all the recover catches.
func addError(ctx context.Context, err *gqlerror.Error) {
	defer func() { _ = recover() }()
	transport.AddSubscriptionError(ctx, err)
}

// fellBehind is the error of a subscription cut for falling behind.
func fellBehind(buffer int) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    fmt.Sprintf("the subscription fell %d events behind and was ended: subscribe again with after set to the last cursor received", buffer),
		Extensions: map[string]any{"code": string(apperr.RateLimited)}}
}

// start reads the caller's company and the cursor after (0 when nil).
func start(ctx context.Context, after *string) (uuid.UUID, int64, error) {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return uuid.Nil, 0, err
	}
	var from int64
	if after != nil {
		if from, err = strconv.ParseInt(*after, 10, 64); err != nil || from < 0 {
			return uuid.Nil, 0, apperr.InvalidField("after", "%q is not an event's cursor (the cursor of an event received)", *after)
		}
	}
	return company, from, nil
}

// begin registers sub with the Hub, then reads what it starts from
// (catchUp): registered first, so that nothing committed meanwhile is
// missed. On failure, sub and the subscription's place (release) are let
// go.
func (h *Hub) begin(ctx context.Context, sub *Subscriber, after *string, from int64, release func()) (
	replay []*ent.RecordEvent, followFrom int64, refetchAt *int64, err error) {
	if err := h.add(sub); err != nil {
		release()
		return nil, 0, nil, err
	}
	if replay, followFrom, refetchAt, err = h.catchUp(ctx, after, from); err != nil {
		sub.Close()
		release()
	}
	return replay, followFrom, refetchAt, err
}

// catchUp reads what a subscription registered with the Hub starts from:
// the events after the cursor after, and the id it follows on from (the
// last of them: what the Hub hands over is passed up to it). Without after
// nothing is read: the subscription follows what the Hub hands over from
// its registration on. When after is too far back (stale), the subscriber
// must refetch; refetchAt is the newest id, its cursor, and followed on from.
func (h *Hub) catchUp(ctx context.Context, after *string, from int64) (replay []*ent.RecordEvent, followFrom int64, refetchAt *int64, err error) {
	if after == nil {
		return nil, 0, nil, nil
	}
	replay, stale, err := h.Replay(ctx, from)
	if err != nil {
		return nil, 0, nil, err
	}
	if !stale {
		if len(replay) > 0 {
			from = replay[len(replay)-1].ID
		}
		return replay, from, nil, nil
	}
	// Followed from the newest on: what committed before, the refetch reads.
	newest, err := h.newest(ctx)
	return nil, newest, &newest, err
}

// stream follows the caller's company's events from the cursor after (when
// given) and sends what translate makes of each, until ctx ends or the
// subscriber falls behind; refetch is what says that after is too far back.
func stream[T any](ctx context.Context, h *Hub, after *string, translate func(context.Context, *ent.RecordEvent) ([]T, error),
	refetch func(cursor string) T) (<-chan T, error) {
	company, from, err := start(ctx, after)
	if err != nil {
		return nil, err
	}
	release, err := holdPlace(ctx)
	if err != nil {
		return nil, err
	}
	// Subscribed before the replay is read: an event committed meanwhile
	// waits in the buffer, and is passed over if the replay had it.
	sub := h.newSubscriber(company)
	replay, followFrom, refetchAt, err := h.begin(ctx, sub, after, from, release)
	if err != nil {
		return nil, err
	}
	from = followFrom
	out := make(chan T)
	go func() {
		defer release()
		defer close(out)
		defer sub.Close()
		// handle sends what ev makes; false: the subscription ends.
		handle := func(ev *ent.RecordEvent) bool {
			made, err := translate(ctx, ev)
			if err != nil {
				if ctx.Err() == nil {
					h.log.LogAttrs(ctx, slog.LevelWarn, "live: reading what an event tells", slog.Int64("event", ev.ID), slog.String("error", err.Error()))
					addError(ctx, &gqlerror.Error{
						Message:    "the event could not be read: subscribe again with after set to the last cursor received",
						Extensions: map[string]any{"code": string(apperr.Unavailable)}})
				}
				return false
			}
			for _, m := range made {
				select {
				case out <- m:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		last := from
		if refetchAt != nil {
			select {
			case out <- refetch(strconv.FormatInt(*refetchAt, 10)):
			case <-ctx.Done():
				return
			}
		}
		for _, ev := range replay {
			last = ev.ID
			if !handle(ev) {
				return
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.Cut():
				addError(ctx, fellBehind(h.opts.Buffer))
				return
			case ev := <-sub.Events():
				if ev.ID <= last {
					continue
				}
				if !handle(ev) {
					return
				}
			}
		}
	}()
	return out, nil
}

// connection counts the subscriptions of one connection.
type connection struct {
	max int64
	n   atomic.Int64
}

type connectionKey struct{}

// WithConnection marks ctx as one connection's, which may hold max
// subscriptions at once.
func WithConnection(ctx context.Context, max int) context.Context {
	return context.WithValue(ctx, connectionKey{}, &connection{max: int64(max)})
}

// Subscriptions is how many subscriptions the connection of ctx holds.
func Subscriptions(ctx context.Context) int {
	if c, ok := ctx.Value(connectionKey{}).(*connection); ok {
		return int(c.n.Load())
	}
	return 0
}

// holdPlace takes one of the connection's places, refused past its bound;
// release gives it back.
func holdPlace(ctx context.Context) (release func(), err error) {
	c, ok := ctx.Value(connectionKey{}).(*connection)
	if !ok {
		return func() {}, nil
	}
	if c.n.Add(1) > c.max {
		c.n.Add(-1)
		return nil, &apperr.Error{Code: apperr.RateLimited,
			Message: fmt.Sprintf("this connection holds %d subscriptions, the most one may: end one, or open another connection", c.max)}
	}
	return func() { c.n.Add(-1) }, nil
}
