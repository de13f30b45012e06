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
	FullySigned  Kind = "FULLY_SIGNED"
	PDFReady     Kind = "PDF_READY"
	Corrected    Kind = "INVENTORY_CORRECTED"
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
	recordevent.KindFullySigned:        FullySigned,
	recordevent.KindPdfStored:          PDFReady,
	recordevent.KindInventoryCorrected: Corrected,
}

// MarshalGQL writes the kind as its GraphQL enum value.
func (k Kind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL reads a GraphQL enum value.
func (k *Kind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	for _, known := range kinds {
		if Kind(s) == known {
			*k = known
			return nil
		}
	}
	if Kind(s) == Refetch {
		*k = Refetch
		return nil
	}
	return fmt.Errorf("%v is not an InventoryEventKind", v)
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
}

func eventOf(ev *ent.RecordEvent) *Event {
	return &Event{Cursor: strconv.FormatInt(ev.ID, 10), At: ev.At.UTC(), Kind: kinds[ev.Kind], PropertyID: &ev.PropertyID,
		InventoryID: &ev.InventoryID, ItemID: ev.ItemID, PhotoID: ev.PhotoID, Version: ev.Version, By: ev.Actor}
}

// Filter narrows a subscription to one property or one inventory.
type Filter struct{ Property, Inventory *uuid.UUID }

func (f Filter) matches(ev *ent.RecordEvent) bool {
	return (f.Property == nil || *f.Property == ev.PropertyID) && (f.Inventory == nil || *f.Inventory == ev.InventoryID)
}

// InventoryEvents is the subscription inventoryEvents: the events of the
// caller's company that f matches, from the cursor after (when given) on,
// until ctx ends or the subscriber falls behind.
func (h *Hub) InventoryEvents(ctx context.Context, f Filter, after *string) (<-chan *Event, error) {
	return stream(ctx, h, after,
		func(_ context.Context, ev *ent.RecordEvent) ([]*Event, error) {
			if !f.matches(ev) {
				return nil, nil
			}
			return []*Event{eventOf(ev)}, nil
		},
		func(cursor string) *Event { return &Event{Cursor: cursor, At: time.Now().UTC(), Kind: Refetch} })
}

// stream follows the caller's company's events from the cursor after (when
// given) and sends what translate makes of each, until ctx ends or the
// subscriber falls behind; refetch is what says that after is too far back.
func stream[T any](ctx context.Context, h *Hub, after *string, translate func(context.Context, *ent.RecordEvent) ([]T, error),
	refetch func(cursor string) T) (<-chan T, error) {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return nil, err
	}
	var from int64
	if after != nil {
		if from, err = strconv.ParseInt(*after, 10, 64); err != nil || from < 0 {
			return nil, apperr.InvalidField("after", "%q is not an event's cursor (the cursor of an event received)", *after)
		}
	}
	release, err := holdPlace(ctx)
	if err != nil {
		return nil, err
	}
	// Subscribed before the replay is read: an event committed meanwhile
	// waits in the buffer, and is passed over if the replay had it.
	sub, err := h.Subscribe(company)
	if err != nil {
		release()
		return nil, err
	}
	var replay []*ent.RecordEvent
	stale := false
	if after != nil {
		replay, stale, err = h.Replay(ctx, from)
	}
	if err == nil && (after == nil || stale) {
		// From now: what committed before is what the subscriber reads
		// (or refetches), though the Hub may hand it over after this.
		from, err = h.newest(ctx)
	}
	if err != nil {
		sub.Close()
		release()
		return nil, err
	}
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
					transport.AddSubscriptionError(ctx, &gqlerror.Error{
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
		if stale {
			select {
			case out <- refetch(strconv.FormatInt(from, 10)):
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
				transport.AddSubscriptionError(ctx, &gqlerror.Error{
					Message:    fmt.Sprintf("the subscription fell %d events behind and was ended: subscribe again with after set to the last cursor received", h.opts.Buffer),
					Extensions: map[string]any{"code": string(apperr.RateLimited)}})
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
