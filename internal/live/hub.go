// Package live tells each subscriber of its company's writes as they commit.
//
// Every write of an inventory is a row of record_events, written in the
// write's own transaction (internal/records). On PostgreSQL a trigger calls
// pg_notify with the event's id as the transaction commits, so every
// instance's Hub, listening on one connection of its own, learns of every
// write, whichever instance or command made it; on SQLite the Hub reads the
// table for ids past the last it saw, a few times a second, which sees the
// writes of other processes on the same file too (inventoryd import). The
// notification carries the id only: the Hub reads the event, and each
// subscriber reads what it selected, under its own company.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Channel is the PostgreSQL channel the events' ids are notified on (the
// trigger of migration 20261126030000_record_events_notify).
const Channel = "record_events"

// Defaults of Options.
const (
	DefaultPerCompany = 1000
	DefaultBuffer     = 64
	DefaultPoll       = 100 * time.Millisecond
	DefaultWindow     = 1000
)

// Options bound the Hub.
type Options struct {
	// PerCompany is how many subscriptions a company may hold at once, on
	// this instance, or on all the instances sharing Shared
	// (DefaultPerCompany when 0).
	PerCompany int
	// Shared, when set, counts each company's subscriptions in Redis for
	// every instance; while Redis is down, each instance counts its own.
	Shared *sharedlimit.Redis
	// Buffer is how many events a subscriber may fall behind before it is
	// cut (DefaultBuffer when 0): a client that does not read holds that
	// much of the server's memory, no more.
	Buffer int
	// Poll is how often SQLite's table is read (DefaultPoll when 0).
	Poll time.Duration
	// Window is how far back a subscriber may resume: the company's last
	// Window events (DefaultWindow when 0). Further back, it is told to
	// refetch.
	Window int
}

// Hub routes the events of every company to that company's subscribers.
type Hub struct {
	client  *ent.Client
	dialect string
	listen  *pgx.ConnConfig
	opts    Options
	log     *slog.Logger

	mu   sync.Mutex
	subs map[uuid.UUID]map[*Subscriber]struct{}
	// observers see every event once, whatever its company (Observe).
	observers []func(*ent.RecordEvent)
	// last is the highest event id read: the SQLite poll and a PostgreSQL
	// listener back from a lost connection read on from it.
	last atomic.Int64
	// seen are the ids of the last events delivered, oldest first in ring:
	// on PostgreSQL ids are not delivered in order across companies, and a
	// listener back from a lost connection may hear of one it read.
	seen map[int64]bool
	ring []int64

	delivered, dropped, cut atomic.Int64
	// polling is set when the Hub follows the events by polling on
	// PostgreSQL: its LISTEN did not hear its own NOTIFY (a transaction
	// pooler between it and PostgreSQL). Mode says so.
	polling atomic.Bool
	// repairs are the repair list's changes each signature made, read once
	// for all its subscribers.
	repairs *Shared[[]*RepairEvent]
}

// New returns a Hub reading client's events; listen is the PostgreSQL
// primary's connection configuration (nil on SQLite).
func New(client *ent.Client, dialectName string, listen *pgx.ConnConfig, log *slog.Logger, opts Options) *Hub {
	if opts.PerCompany <= 0 {
		opts.PerCompany = DefaultPerCompany
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	return &Hub{client: client, dialect: dialectName, listen: listen, opts: opts, log: log,
		subs: map[uuid.UUID]map[*Subscriber]struct{}{}, seen: map[int64]bool{}, repairs: NewShared[[]*RepairEvent](64)}
}

// Subscriber receives the events of one company: through its own buffered
// channel (Subscribe), or handed straight to a subscription's channel by
// the Hub (see InventoryEvents), which costs no goroutine of its own.
type Subscriber struct {
	hub     *Hub
	company uuid.UUID
	// offer takes an event without waiting, under the Hub's lock; false:
	// no room, and the subscriber is cut.
	offer func(*ent.RecordEvent) bool
	// onCut tells the subscriber it was cut, under the Hub's lock.
	onCut func()
	// events and cut are a Subscribe's.
	events chan *ent.RecordEvent
	cut    chan struct{}
	gone   bool // removed from the Hub: cut or closed
	// release gives back the subscription's place in its company's shared
	// count (Options.Shared).
	release func()
}

// Events are the company's events, in the order they committed.
func (s *Subscriber) Events() <-chan *ent.RecordEvent { return s.events }

// Cut is closed when the subscriber fell Options.Buffer events behind:
// its events stop, and it must end.
func (s *Subscriber) Cut() <-chan struct{} { return s.cut }

// Close ends the subscription.
func (s *Subscriber) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.remove(s)
}

// remove takes s out of the Hub, under its lock; it reports whether s was
// still in.
func (h *Hub) remove(s *Subscriber) bool {
	if s.gone {
		return false
	}
	s.gone = true
	if s.release != nil {
		s.release()
	}
	if subs := h.subs[s.company]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(h.subs, s.company)
		}
	}
	return true
}

// ErrTooMany refuses a subscription over the company's bound.
var ErrTooMany = errors.New("live: too many subscriptions")

// Observe has observe called with every event the Hub learns of, once, in
// order, whatever its company and whoever wrote it: what this instance keeps
// of the records (a cache) hears of every write there. observe must be
// quick: it runs under the Hub's lock.
func (h *Hub) Observe(observe func(*ent.RecordEvent)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observers = append(h.observers, observe)
}

// Subscribe starts receiving company's events in a buffer of
// Options.Buffer; it is refused when the company holds Options.PerCompany
// subscriptions already.
func (h *Hub) Subscribe(company uuid.UUID) (*Subscriber, error) {
	s := h.newSubscriber(company)
	if err := h.add(s); err != nil {
		return nil, err
	}
	return s, nil
}

// newSubscriber is a subscriber of company's events with a buffer of
// Options.Buffer, not registered yet.
func (h *Hub) newSubscriber(company uuid.UUID) *Subscriber {
	s := &Subscriber{hub: h, company: company, events: make(chan *ent.RecordEvent, h.opts.Buffer), cut: make(chan struct{})}
	s.offer = func(ev *ent.RecordEvent) bool {
		select {
		case s.events <- ev:
			return true
		default:
			return false
		}
	}
	s.onCut = func() { close(s.cut) }
	return s
}

// add registers s, within its company's bound: counted in Redis when the
// Hub shares one and it answers (asked before the Hub's lock is taken),
// here otherwise.
func (h *Hub) add(s *Subscriber) error {
	release, shared, allowed := h.opts.Shared.Acquire(s.company.String(), h.opts.PerCompany)
	if shared && !allowed {
		return &apperr.Error{Code: apperr.RateLimited, Cause: ErrTooMany,
			Message: fmt.Sprintf("your company holds %d subscriptions across the instances, the most it may: end one first", h.opts.PerCompany)}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.subs[s.company]
	if !shared && len(subs) >= h.opts.PerCompany {
		release()
		return &apperr.Error{Code: apperr.RateLimited, Cause: ErrTooMany,
			Message: fmt.Sprintf("your company holds %d subscriptions on this instance, the most it may: end one first", h.opts.PerCompany)}
	}
	s.release = release
	if subs == nil {
		subs = map[*Subscriber]struct{}{}
		h.subs[s.company] = subs
	}
	subs[s] = struct{}{}
	return nil
}

// deliver hands each event to its company's subscribers; one without room
// is cut rather than waited for.
func (h *Hub) deliver(events []*ent.RecordEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range events {
		if h.seen[ev.ID] {
			continue
		}
		if len(h.ring) == seenEvents {
			delete(h.seen, h.ring[0])
			h.ring = h.ring[1:]
		}
		h.seen[ev.ID] = true
		h.ring = append(h.ring, ev.ID)
		for _, observe := range h.observers {
			observe(ev)
		}
		for s := range h.subs[ev.CompanyID] {
			if s.offer(ev) {
				h.delivered.Add(1)
				continue
			}
			h.dropped.Add(1)
			h.cutOff(s)
		}
		if ev.ID > h.last.Load() {
			h.last.Store(ev.ID)
		}
	}
}

// cutOff removes s for falling behind, and tells it; under the Hub's lock.
func (h *Hub) cutOff(s *Subscriber) {
	if h.remove(s) {
		h.cut.Add(1)
		s.onCut()
	}
}

// seenEvents is how many delivered ids the Hub remembers.
const seenEvents = 4096

// Stats are the Hub's figures for /metrics.
type Stats struct {
	Subscribers             int
	Delivered, Dropped, Cut int64
}

// Stats reads the Hub's figures.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	n := 0
	for _, subs := range h.subs {
		n += len(subs)
	}
	h.mu.Unlock()
	return Stats{Subscribers: n, Delivered: h.delivered.Load(), Dropped: h.dropped.Load(), Cut: h.cut.Load()}
}

// Replay reads company's events after the id after, oldest first; stale
// when more than Options.Window of them are there (the subscriber must
// refetch instead).
func (h *Hub) Replay(ctx context.Context, after int64) (events []*ent.RecordEvent, stale bool, err error) {
	events, err = h.client.RecordEvent.Query().Where(recordevent.IDGT(after)).
		Order(ent.Asc(recordevent.FieldID)).Limit(h.opts.Window + 1).All(ctx)
	if err != nil {
		return nil, false, err
	}
	if len(events) > h.opts.Window {
		return nil, true, nil
	}
	return events, false, nil
}

// newest is the id of the newest event ctx's company has (0: none).
func (h *Hub) newest(ctx context.Context) (int64, error) {
	ev, err := h.client.RecordEvent.Query().Order(ent.Desc(recordevent.FieldID)).Select(recordevent.FieldID).First(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return ev.ID, nil
}

// Modes of a Hub (Mode): told of each event by PostgreSQL's NOTIFY, or
// reading them every Poll (SQLite, and a PostgreSQL reached through a
// transaction pooler, which cannot hold a LISTEN).
const (
	ModeListen  = "listen"
	ModePolling = "polling"
)

// Mode is how the Hub follows the events.
func (h *Hub) Mode() string {
	if h.dialect == dialect.Postgres && h.listen != nil && !h.polling.Load() {
		return ModeListen
	}
	return ModePolling
}

// Run reads the events as they commit until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	// Once for the Hub's life: it reads every company's events to route
	// each to its own company's subscribers, who read the records.
	ctx = tenant.Unrestricted(ctx, "live: reading every company's events to route each to that company's subscribers")
	if ctx.Err() != nil {
		return
	}
	if err := h.start(ctx); err != nil && ctx.Err() == nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "live: reading the last event id", slog.String("error", err.Error()))
	}
	if h.dialect == dialect.Postgres && h.listen != nil {
		h.listenLoop(ctx)
		if ctx.Err() != nil {
			return
		}
	}
	h.pollLoop(ctx)
}

// start sets last to the newest event: subscribers hear of what commits
// from now on.
func (h *Hub) start(ctx context.Context) error {
	newest, err := h.client.RecordEvent.Query().Order(ent.Desc(recordevent.FieldID)).Select(recordevent.FieldID).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	h.last.Store(newest.ID)
	return nil
}

// readOn reads and delivers the events after last, a page at a time.
func (h *Hub) readOn(ctx context.Context) error {
	for {
		events, err := h.client.RecordEvent.Query().Where(recordevent.IDGT(h.last.Load())).
			Order(ent.Asc(recordevent.FieldID)).Limit(1000).All(ctx)
		if err != nil {
			return err
		}
		h.deliver(events)
		if len(events) < 1000 {
			return nil
		}
	}
}

func (h *Hub) pollLoop(ctx context.Context) {
	tick := time.NewTicker(h.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := h.readOn(ctx); err != nil && ctx.Err() == nil {
				h.log.LogAttrs(ctx, slog.LevelWarn, "live: reading the events", slog.String("error", err.Error()))
			}
		}
	}
}

// listenLoop listens for the events' ids, connecting again when the
// connection is lost; on each connection it first reads what committed
// while it was not listening. It returns when ctx ends, or when its LISTEN
// does not hear its own NOTIFY (errNotHeard): the Hub polls from then on.
func (h *Hub) listenLoop(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := h.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errNotHeard) {
			h.polling.Store(true)
			h.log.LogAttrs(ctx, slog.LevelWarn, "live: LISTEN does not hear this instance's own NOTIFY (a transaction pooler, such as PgBouncer, between it and PostgreSQL?): following the events by polling instead; set INVENTORY_DATABASE_LISTEN_URL to a direct connection to the primary to be told of them at once",
				slog.Duration("poll", h.opts.Poll), slog.Duration("waited", heardWithin))
			return
		}
		h.log.LogAttrs(ctx, slog.LevelWarn, "live: listening for events; connecting again", slog.String("error", err.Error()),
			slog.Duration("in", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (h *Hub) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, h.listen)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	if err := h.hearsItself(ctx, conn); err != nil {
		return err
	}
	if err := h.readOn(ctx); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, err := strconv.ParseInt(n.Payload, 10, 64)
		if err != nil {
			continue
		}
		ev, err := h.client.RecordEvent.Get(ctx, id)
		if err != nil {
			return err
		}
		h.deliver([]*ent.RecordEvent{ev})
	}
}

// heardWithin is how long a Hub's LISTEN has to hear its own NOTIFY.
const heardWithin = 2 * time.Second

// errNotHeard: the LISTEN did not hear a NOTIFY sent to it.
var errNotHeard = errors.New("live: LISTEN did not hear a NOTIFY sent to it")

// hearsItself checks that conn, listening, hears a NOTIFY that another
// connection sends, as each writer's commit does: through a transaction
// pooler, the LISTEN is held by a server connection the pooler has since
// given to others, and nothing reaches conn (errNotHeard). What arrives
// meanwhile is read on after the check (readOn), not lost.
func (h *Hub) hearsItself(ctx context.Context, conn *pgx.Conn) error {
	sender, err := pgx.ConnectConfig(ctx, h.listen)
	if err != nil {
		return err
	}
	probe := "probe " + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err = sender.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, probe)
	sender.Close(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, heardWithin)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(wait)
		switch {
		case err != nil && ctx.Err() == nil && wait.Err() != nil:
			return errNotHeard
		case err != nil:
			return err
		case n.Payload == probe:
			return nil
		}
	}
}
