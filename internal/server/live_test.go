package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/ide"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
	"github.com/propertyrecords/inventory/internal/transfer"
)

// instance is one server of the service with its Hub, on a database it may
// share with others.
type instance struct {
	srv *apitest.Server
	st  *store.Store
	hub *live.Hub
}

func newInstance(t testing.TB, url string, opts server.Options) *instance {
	t.Helper()
	return newInstanceWith(t, url, opts, live.Options{})
}

func newInstanceWith(t testing.TB, url string, opts server.Options, liveOpts live.Options) *instance {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	liveOpts.Poll = 20 * time.Millisecond
	hub := live.New(st.Client, st.Dialect(), st.PrimaryConfig(), slog.New(slog.DiscardHandler), liveOpts)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	opts.Live.Hub = hub
	if opts.Files == nil {
		opts.Files = apitest.Files(t)
	}
	return &instance{srv: apitest.NewServerWith(t, st, opts), st: st, hub: hub}
}

// wsClient is a graphql-transport-ws client, as graphql-ws speaks it. Its
// messages are read as they come (a read that times out would close the
// connection), pings answered.
type wsClient struct {
	t        *testing.T
	conn     *websocket.Conn
	messages chan wsMessage
	// closed holds why reading stopped, once it has.
	closed chan error
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// errNone is next's error when no message came within the time.
var errNone = errors.New("no message within the time")

// dialLive opens a connection and sends connection_init with payload;
// the error is the close of a refused connection.
func dialLive(t *testing.T, base string, payload map[string]any) (*wsClient, error) {
	t.Helper()
	return dialLiveAt(t, base+"/graphql", payload)
}

// dialLiveAt is dialLive at the http URL of /graphql given, its query included.
func dialLiveAt(t *testing.T, url string, payload map[string]any) (*wsClient, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"),
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	c := &wsClient{t: t, conn: conn, messages: make(chan wsMessage, 1000), closed: make(chan error, 1)}
	go func() {
		for {
			var m wsMessage
			if err := wsjson.Read(context.Background(), conn, &m); err != nil {
				c.closed <- err
				close(c.messages)
				return
			}
			switch m.Type {
			case "ping":
				_ = wsjson.Write(context.Background(), conn, wsMessage{Type: "pong"})
			case "pong":
			default:
				c.messages <- m
			}
		}
	}()
	init, _ := json.Marshal(payload)
	c.send(wsMessage{Type: "connection_init", Payload: init})
	for {
		m, err := c.next(5 * time.Second)
		if err != nil {
			return nil, err
		}
		if m.Type == "connection_ack" {
			return c, nil
		}
	}
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	if err := wsjson.Write(context.Background(), c.conn, m); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next message other than a ping or pong; errNone when
// none came within the time, or why the connection closed.
func (c *wsClient) next(within time.Duration) (wsMessage, error) {
	select {
	case m, ok := <-c.messages:
		if !ok {
			err := <-c.closed
			c.closed <- err
			return m, err
		}
		return m, nil
	case <-time.After(within):
		return wsMessage{}, errNone
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: payload})
}

type liveEvent struct {
	Cursor, Kind, InventoryID string
	PropertyID                *string
	Inventory                 *struct {
		ID           string
		Version      int
		Environments []struct{ Name string }
	}
}

// event reads the next event of subscription id.
func (c *wsClient) event(id string, within time.Duration) (liveEvent, error) {
	c.t.Helper()
	m, err := c.next(within)
	if err != nil {
		return liveEvent{}, err
	}
	if m.Type != "next" || m.ID != id {
		return liveEvent{}, fmt.Errorf("message %s of %q: %s", m.Type, m.ID, m.Payload)
	}
	var res struct {
		Data struct {
			InventoryEvents liveEvent
		}
		Errors []apitest.Error
	}
	if err := json.Unmarshal(m.Payload, &res); err != nil || len(res.Errors) > 0 {
		return liveEvent{}, fmt.Errorf("next: %s (%v)", m.Payload, err)
	}
	return res.Data.InventoryEvents, nil
}

const eventsSubscription = `subscription($property: ID, $after: String) { inventoryEvents(propertyId: $property, after: $after) {
	cursor kind inventoryId propertyId inventory { id version environments { name } } } }`

const createOne = `mutation($input: CreateInventoryInput!) { createInventory(input: $input) { inventory { id version } } }`

// createOn makes an inventory of one room on srv as company A and returns its id.
func createOn(t testing.TB, srv *apitest.Server, prop string) string {
	t.Helper()
	var got struct {
		CreateInventory struct{ Inventory struct{ ID string } }
	}
	srv.MustData(t, company, createOne, map[string]any{"input": map[string]any{"propertyId": prop, "inventoryType": "CAPTACION",
		"rentalPrice": "1000000.00", "environments": []any{map[string]any{"name": "Sala", "level": 1, "items": []any{}}}}}, &got)
	return got.CreateInventory.Inventory.ID
}

func aPropertyOf(t testing.TB, st *store.Store, c uuid.UUID) string {
	t.Helper()
	p, err := st.Client.Property.Query().Order(property.ByID()).First(tenant.WithCompany(context.Background(), c))
	if err != nil {
		t.Fatal(err)
	}
	return p.ID.String()
}

// A write on one instance reaches the subscribers of its company on
// another (two servers on one database: PostgreSQL's LISTEN/NOTIFY, or
// SQLite's table read by each), each receiving the event once with the
// inventory as it selected it; another company's subscriber receives
// nothing, and a subscriber of another property nothing either.
func TestAWriteOnOneInstanceReachesSubscribersOnAnother(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one, two := newInstance(t, url, server.Options{}), newInstance(t, url, server.Options{})
	prop := aPropertyOf(t, one.st, datagen.DemoCompanies[0])

	mine, err := dialLive(t, two.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	mine.subscribe("1", eventsSubscription, map[string]any{"property": prop})
	theirs, err := dialLive(t, two.srv.URL, map[string]any{"x-company-id": datagen.DemoCompanies[1].String()})
	if err != nil {
		t.Fatal(err)
	}
	theirs.subscribe("1", eventsSubscription, nil)
	other, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	other.subscribe("1", eventsSubscription, map[string]any{"property": uuid.NewString()})
	time.Sleep(100 * time.Millisecond) // the subscriptions are registered

	id := createOn(t, one.srv, prop)
	ev, err := mine.event("1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != "INVENTORY_CREATED" || ev.InventoryID != id || ev.PropertyID == nil || *ev.PropertyID != prop ||
		ev.Inventory == nil || ev.Inventory.ID != id || len(ev.Inventory.Environments) != 1 || ev.Inventory.Environments[0].Name != "Sala" {
		t.Fatalf("event: %+v; want the creation of %s with its room", ev, id)
	}
	if m, err := mine.next(500 * time.Millisecond); err == nil {
		t.Errorf("a second message after one write: %s %s", m.Type, m.Payload)
	}
	for name, c := range map[string]*wsClient{"another company's subscriber": theirs, "another property's subscriber": other} {
		if m, err := c.next(300 * time.Millisecond); err == nil {
			t.Errorf("%s received %s %s", name, m.Type, m.Payload)
		}
	}

	// Resuming after the creation's cursor: the events since, then live.
	upd := `mutation($id: ID!, $v: Int!) { updateInventory(input: {id: $id, expectedVersion: $v, rentalPrice: "1200000.00"}) { inventory { version } } }`
	one.srv.MustData(t, company, upd, map[string]any{"id": id, "v": 1}, &struct{}{})
	late, err := dialLive(t, two.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	late.subscribe("7", eventsSubscription, map[string]any{"property": prop, "after": ev.Cursor})
	if got, err := late.event("7", 10*time.Second); err != nil || got.Kind != "INVENTORY_UPDATED" || got.Inventory == nil || got.Inventory.Version != 2 {
		t.Fatalf("resumed after the creation: %+v %v; want the update, then live", got, err)
	}
	one.srv.MustData(t, company, upd, map[string]any{"id": id, "v": 2}, &struct{}{})
	if got, err := late.event("7", 10*time.Second); err != nil || got.Kind != "INVENTORY_UPDATED" || got.Inventory.Version != 3 {
		t.Fatalf("live after the replay: %+v %v", got, err)
	}
}

// A subscription over GraphQL over SSE (graphql-sse's distinct connections
// mode) receives the event as a "next" event.
func TestASubscriptionOverSSE(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one := newInstance(t, url, server.Options{})
	prop := aPropertyOf(t, one.st, datagen.DemoCompanies[0])
	body, _ := json.Marshal(map[string]any{"query": eventsSubscription, "variables": map[string]any{"property": prop}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, one.srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Company-Id", company)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("SSE: HTTP %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	if res.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("SSE: X-Accel-Buffering %q; want no, so that nginx passes each event on as it comes", res.Header.Get("X-Accel-Buffering"))
	}
	// urql offers text/event-stream beside JSON on every query: answered as
	// a query is (with its deadline and fair share), not kept open.
	q, _ := http.NewRequestWithContext(ctx, http.MethodPost, one.srv.URL+"/graphql",
		strings.NewReader(`{"query":"{ inventories(first: 1) { edges { node { id } } } }"}`))
	q.Header.Set("Content-Type", "application/json")
	q.Header.Set("Accept", "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed")
	q.Header.Set("X-Company-Id", company)
	answer, err := http.DefaultClient.Do(q)
	if err != nil {
		t.Fatal(err)
	}
	answer.Body.Close()
	if answer.StatusCode != http.StatusOK || strings.Contains(answer.Header.Get("Content-Type"), "event-stream") {
		t.Errorf("urql's query accepting JSON or a stream: HTTP %d %s; want a JSON answer", answer.StatusCode, answer.Header.Get("Content-Type"))
	}
	events := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
		close(events)
	}()
	time.Sleep(100 * time.Millisecond)
	id := createOn(t, one.srv, prop)
	select {
	case data := <-events:
		if !strings.Contains(data, id) || !strings.Contains(data, "INVENTORY_CREATED") {
			t.Errorf("SSE event: %s; want the creation of %s", data, id)
		}
	case <-ctx.Done():
		t.Fatal("no SSE event within 20 s")
	}
}

// The credential is the connection's, established at connection_init as
// for queries: a bad key is refused with 4403, and a key revoked while its
// subscription runs ends it within the recheck interval, with 4403.
func TestARevokedKeysSubscriptionsEnd(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys := auth.NewKeys(st.Client)
	key, _, err := keys.Create(context.Background(), datagen.DemoCompanies[0], "dashboard", auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	one := newInstance(t, url, server.Options{Auth: auth.APIKey, Verifier: keys, Live: server.LiveOptions{Recheck: 200 * time.Millisecond}})
	if _, err := dialLive(t, one.srv.URL, map[string]any{"X-Api-Key": "inv_not_a_key"}); websocket.CloseStatus(err) != 4403 {
		t.Errorf("connection_init with a bad key: %v; want closed with 4403", err)
	}
	c, err := dialLive(t, one.srv.URL, map[string]any{"Authorization": "Bearer " + key})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("1", eventsSubscription, nil)
	if _, err := keys.Revoke(context.Background(), "dashboard"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		_, err := c.next(5 * time.Second)
		if err == nil {
			continue
		}
		if websocket.CloseStatus(err) != 4403 {
			t.Fatalf("after the revocation: %v; want closed with 4403", err)
		}
		break
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the revoked key's subscription ended after %s", took)
	}
}

// Shutting down ends the connections with 1012, on which graphql-ws
// clients reconnect (to another instance).
func TestShutdownEndsSubscriptionsSoClientsReconnect(t *testing.T) {
	drain := server.NewDrain()
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Drain: drain})
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("1", eventsSubscription, nil)
	time.Sleep(50 * time.Millisecond)
	drain.Start()
	for err == nil {
		_, err = c.next(5 * time.Second)
	}
	if websocket.CloseStatus(err) != 1012 {
		t.Fatalf("at shutdown: %v; want closed with 1012", err)
	}
}

// A connection holds a bounded number of subscriptions.
func TestAConnectionsSubscriptionsAreBounded(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Live: server.LiveOptions{PerConnection: 2}})
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2", "3"} {
		c.subscribe(id, eventsSubscription, nil)
	}
	// One of the three (they start at once) is refused; the others stay.
	m, err := c.next(5 * time.Second)
	if err != nil || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
		t.Fatalf("three subscriptions on a connection of two: %s %s %v; want one refused, RATE_LIMITED", m.Type, m.Payload, err)
	}
	if m, err := c.next(300 * time.Millisecond); err == nil && m.Type != "complete" {
		t.Errorf("after the refusal: %s %s; want the other two running", m.Type, m.Payload)
	}
}

// newProperty registers a property of company in city, directly: the API
// has no mutation for properties.
func newProperty(t *testing.T, st *store.Store, c uuid.UUID, city string) string {
	t.Helper()
	ctx := tenant.Unrestricted(context.Background(), "test: a property of its own")
	p, err := st.Client.Property.Create().SetCompanyID(c).SetAddress("Carrera 23 # 65-11").SetCity(city).SetPropertyType("Casa").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p.ID.String()
}

// makeSigned creates an inventory of prop with one room of items (name to
// to-repair) through the API and signs it for both parties.
func makeSigned(t *testing.T, srv *apitest.Server, st *store.Store, prop string, items map[string]bool) string {
	t.Helper()
	m, err := st.Client.Material.Query().First(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var list []any
	for _, name := range []string{"Puerta", "Ventana", "Piso"} {
		if repair, ok := items[name]; ok {
			rating := 5
			if repair {
				rating = 2
			}
			list = append(list, map[string]any{"name": name, "materialId": m.ID.String(), "rating": rating, "toRepair": repair})
		}
	}
	var made struct {
		CreateInventory struct{ Inventory struct{ ID string } }
	}
	srv.MustData(t, company, createOne, map[string]any{"input": map[string]any{"propertyId": prop, "inventoryType": "COLOCACION",
		"rentalPrice": "1000000.00", "environments": []any{map[string]any{"name": "Sala", "level": 1, "items": list}}}}, &made)
	id := made.CreateInventory.Inventory.ID
	for _, party := range []string{"AGENT", "OWNER"} {
		srv.MustData(t, company, `mutation($input: SignInventoryInput!) { signInventory(input: $input) { inventory { id } } }`,
			map[string]any{"input": map[string]any{"inventoryId": id, "party": party, "signerName": "Firma " + party}}, &struct{}{})
	}
	return id
}

type repairEvent struct {
	Cursor, Kind, InventoryID, ItemID string
	City                              string
	Item                              *struct{ Name string }
}

func (c *wsClient) repairs(id string, within time.Duration) (map[string]string, error) {
	c.t.Helper()
	got := map[string]string{}
	for {
		m, err := c.next(within)
		if err == errNone {
			return got, nil // no more within the time
		}
		if err != nil {
			return got, err
		}
		var res struct {
			Data   struct{ RepairEvents repairEvent }
			Errors []apitest.Error
		}
		if m.Type != "next" || m.ID != id || json.Unmarshal(m.Payload, &res) != nil || len(res.Errors) > 0 || res.Data.RepairEvents.Item == nil {
			return got, fmt.Errorf("message %s of %q: %s", m.Type, m.ID, m.Payload)
		}
		got[res.Data.RepairEvents.Item.Name] = res.Data.RepairEvents.Kind
		within = 500 * time.Millisecond
	}
}

// The repair list's changes as inventories are signed: the first signed
// inventory of a property flags its items to repair; the next one tells
// which were repaired and which are newly to repair. Another city's
// subscriber hears nothing.
func TestRepairEventsTellWhatEachSignatureFlagsAndRepairs(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one := newInstance(t, url, server.Options{})
	prop := newProperty(t, one.st, datagen.DemoCompanies[0], "Manizales")
	const sub = `subscription($city: String) { repairEvents(city: $city) { cursor kind inventoryId itemId city item { name } } }`
	here, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	here.subscribe("r", sub, map[string]any{"city": "MANIZALES"})
	elsewhere, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere.subscribe("r", sub, map[string]any{"city": "Pasto"})
	time.Sleep(100 * time.Millisecond)

	makeSigned(t, one.srv, one.st, prop, map[string]bool{"Puerta": false, "Ventana": true})
	if got, err := here.repairs("r", 10*time.Second); err != nil || len(got) != 1 || got["Ventana"] != "FLAGGED" {
		t.Fatalf("the first signed inventory: %v %v; want Ventana FLAGGED", got, err)
	}
	makeSigned(t, one.srv, one.st, prop, map[string]bool{"Puerta": true, "Ventana": false, "Piso": true})
	if got, err := here.repairs("r", 10*time.Second); err != nil || len(got) != 3 || got["Ventana"] != "REPAIRED" ||
		got["Puerta"] != "FLAGGED" || got["Piso"] != "FLAGGED" {
		t.Fatalf("the next signed inventory: %v %v; want Ventana REPAIRED, Puerta and Piso FLAGGED", got, err)
	}
	if m, err := elsewhere.next(300 * time.Millisecond); err == nil {
		t.Errorf("another city's subscriber received %s %s", m.Type, m.Payload)
	}
}

// A subscriber resuming from further back than the window kept is told to
// refetch, then follows the events from there.
func TestResumingTooFarBackSaysRefetch(t *testing.T) {
	one := newInstanceWith(t, testdb.DemoRecords.URL(t), server.Options{}, live.Options{Window: 2})
	prop := aPropertyOf(t, one.st, datagen.DemoCompanies[0])
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("1", eventsSubscription, map[string]any{"property": prop})
	time.Sleep(100 * time.Millisecond)
	first := createOn(t, one.srv, prop)
	ev, err := c.event("1", 10*time.Second)
	if err != nil || ev.InventoryID != first {
		t.Fatalf("the first event: %+v %v", ev, err)
	}
	for range 3 {
		createOn(t, one.srv, prop)
	}
	late, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	late.subscribe("2", eventsSubscription, map[string]any{"property": prop, "after": ev.Cursor})
	if got, err := late.event("2", 10*time.Second); err != nil || got.Kind != "REFETCH" || got.Inventory != nil {
		t.Fatalf("resuming 3 events back with a window of 2: %+v %v; want REFETCH", got, err)
	}
	next := createOn(t, one.srv, prop)
	if got, err := late.event("2", 10*time.Second); err != nil || got.Kind != "INVENTORY_CREATED" || got.InventoryID != next {
		t.Fatalf("after REFETCH: %+v %v; want the next write", got, err)
	}
	if _, err := dialLiveAndSubscribeBad(t, one.srv.URL); err != nil {
		t.Error(err)
	}
}

// dialLiveAndSubscribeBad subscribes with a cursor that is no cursor: an
// INVALID_ARGUMENT naming after, not a closed connection.
func dialLiveAndSubscribeBad(t *testing.T, base string) (wsMessage, error) {
	c, err := dialLive(t, base, map[string]any{"X-Company-Id": company})
	if err != nil {
		return wsMessage{}, err
	}
	c.subscribe("9", eventsSubscription, map[string]any{"after": "yesterday"})
	m, err := c.next(5 * time.Second)
	if err != nil || !strings.Contains(string(m.Payload), "INVALID_ARGUMENT") || !strings.Contains(string(m.Payload), `"field":"after"`) {
		return m, fmt.Errorf("a subscription after %q: %s %s %v; want INVALID_ARGUMENT on after", "yesterday", m.Type, m.Payload, err)
	}
	return m, nil
}

// A connection that holds no subscription is closed once idle for the
// setting; /metrics counts the connections open.
func TestAnIdleConnectionIsClosedAndConnectionsAreCounted(t *testing.T) {
	instruments := metrics.New()
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Metrics: instruments, Live: server.LiveOptions{Idle: 300 * time.Millisecond}})
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	if res, body := one.srv.Get(t, "/metrics", nil); res.StatusCode != http.StatusOK || !strings.Contains(string(body), "inventory_live_connections 1") ||
		!strings.Contains(string(body), "inventory_live_events_dropped_total 0") {
		t.Errorf("/metrics with one connection open: HTTP %d, live series:\n%s", res.StatusCode, grepLines(string(body), "inventory_live_"))
	}
	start := time.Now()
	_, err = c.next(5 * time.Second)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure || time.Since(start) > 2*time.Second {
		t.Fatalf("an idle connection: %v after %s; want closed (1000) within about 300 ms", err, time.Since(start))
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// The import's writes reach subscribers as the API's do: the import runs
// as a process of its own (here a store of its own) on the same database.
func TestTheImportsWritesReachSubscribers(t *testing.T) {
	url := testdb.DemoRecords.URL(t)
	one := newInstance(t, url, server.Options{})
	var exported bytes.Buffer
	if _, err := (&transfer.Exporter{Client: one.st.Client}).Export(context.Background(), datagen.DemoCompanies[0], &exported); err != nil {
		t.Fatal(err)
	}
	var line string
	var rec struct {
		InventoryID string `json:"InventoryId"`
		IsSigned    bool
	}
	for l := range strings.SplitSeq(exported.String(), "\n") {
		if json.Unmarshal([]byte(l), &rec) == nil && !rec.IsSigned && rec.InventoryID != "" {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatal("no unsigned inventory in the demo's export")
	}
	// Its rent changed: a line stated as stored writes nothing, and tells
	// no one.
	line = regexp.MustCompile(`"RentalPrice":"[0-9.]+"`).ReplaceAllString(line, `"RentalPrice":"1234567.00"`)
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("1", `subscription { inventoryEvents { kind inventoryId by } }`, nil)
	time.Sleep(100 * time.Millisecond)

	importer, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer importer.Close()
	sum, err := (&transfer.Importer{Client: importer.Client}).Import(context.Background(), strings.NewReader(line+"\n"))
	if err != nil || sum.Updated != 1 {
		t.Fatalf("import: %+v %v", sum, err)
	}
	m, err := c.next(10 * time.Second)
	var res struct {
		Data struct {
			InventoryEvents struct {
				Kind, InventoryID string
				By                *string
			}
		}
	}
	if err != nil || json.Unmarshal(m.Payload, &res) != nil || res.Data.InventoryEvents.Kind != "INVENTORY_UPDATED" ||
		res.Data.InventoryEvents.InventoryID != rec.InventoryID || res.Data.InventoryEvents.By == nil || *res.Data.InventoryEvents.By != "inventoryd import" {
		t.Fatalf("the import's write: %s %v; want INVENTORY_UPDATED of %s by inventoryd import", m.Payload, err, rec.InventoryID)
	}
}

// The IDE's live tab, beside the capture tab: its subscription, with its
// variables and its headers as the connection's credential (GraphiQL's
// wsConnectionParams), hears the capture tab's CreateInventory.
func TestTheIDEsLiveTabHearsTheCaptureTab(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{IDECompany: datagen.DemoCompanies[0]})
	res, page := one.srv.Get(t, "/", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "subscription Live") || !strings.Contains(string(page), "subscriptionUrl") {
		t.Fatalf("the IDE page: HTTP %d, without the live tab or its WebSocket fetcher", res.StatusCode)
	}
	ctx := tenant.WithCompany(context.Background(), datagen.DemoCompanies[0])
	prop, err := one.st.Client.Property.Query().FirstID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := one.st.Client.Item.Query().WithMaterial().First(ctx)
	if err != nil {
		t.Fatal(err)
	}
	examples := ide.Examples{Property: prop, Material: it.Edges.Material.ID}
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"query": ide.LiveQuery, "variables": ide.LiveVariables(examples)})
	c.send(wsMessage{ID: "live", Type: "subscribe", Payload: payload})
	time.Sleep(100 * time.Millisecond)
	body, _ := json.Marshal(map[string]any{"query": ide.CaptureQuery, "operationName": "CreateInventory", "variables": ide.CaptureVariables(examples)})
	req, _ := http.NewRequest(http.MethodPost, one.srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Company-Id", company)
	created, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created.Body.Close()
	m, err := c.next(10 * time.Second)
	if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), `"kind":"INVENTORY_CREATED"`) {
		t.Fatalf("the live tab: %s %s %v; want the capture tab's creation", m.Type, m.Payload, err)
	}
}

// The heartbeat: the server pings a WebSocket every Heartbeat, and a client
// that stops answering (a phone gone out of coverage) is dropped within two.
func TestAClientThatStopsAnsweringPingsIsDropped(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{Live: server.LiveOptions{Heartbeat: 100 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(one.srv.URL, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	init, _ := json.Marshal(map[string]any{"X-Company-Id": company})
	if err := wsjson.Write(ctx, conn, wsMessage{Type: "connection_init", Payload: init}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(map[string]any{"query": eventsSubscription})
	if err := wsjson.Write(ctx, conn, wsMessage{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	start, pings := time.Now(), 0
	var readErr error
	for readErr == nil {
		var m wsMessage
		if readErr = wsjson.Read(ctx, conn, &m); readErr == nil && m.Type == "ping" {
			pings++ // never answered
		}
	}
	if pings == 0 || ctx.Err() != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a client that never answers pings: %d pings, then %v after %s; want it dropped within about 300 ms", pings, readErr, time.Since(start))
	}
}

// A party's signature event tells that signature as it was made, over
// graphql-ws: the agent who signed remotely is remote in AGENT_SIGNED
// whatever the inventory is when the event is sent (its isRemoteSigned is
// set once it is fully signed); the owner who signed in person is not;
// other events tell no signature.
func TestASignatureEventSaysWhetherThatSignatureWasRemote(t *testing.T) {
	one := newInstance(t, testdb.DemoRecords.URL(t), server.Options{})
	prop := aPropertyOf(t, one.st, datagen.DemoCompanies[0])
	c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
	if err != nil {
		t.Fatal(err)
	}
	c.subscribe("1", `subscription($property: ID) { inventoryEvents(propertyId: $property) {
		kind signature { party signerName remote method } } }`, map[string]any{"property": prop})
	time.Sleep(100 * time.Millisecond) // the subscription is registered
	id := createOn(t, one.srv, prop)
	sign := `mutation($input: SignInventoryInput!) { signInventory(input: $input) { inventory { id } } }`
	one.srv.MustData(t, company, sign, map[string]any{"input": map[string]any{"inventoryId": id, "party": "AGENT", "signerName": "Ana Gómez", "remote": true}}, &struct{}{})
	one.srv.MustData(t, company, sign, map[string]any{"input": map[string]any{"inventoryId": id, "party": "OWNER", "signerName": "Luis Pérez"}}, &struct{}{})

	type signature struct {
		Party, SignerName, Method string
		Remote                    bool
	}
	got := map[string]*signature{}
	for range 4 { // created, the agent's, the owner's, fully signed
		m, err := c.next(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Data struct {
				InventoryEvents struct {
					Kind      string
					Signature *signature
				}
			}
			Errors []apitest.Error
		}
		if err := json.Unmarshal(m.Payload, &res); err != nil || len(res.Errors) > 0 {
			t.Fatalf("next: %s (%v)", m.Payload, err)
		}
		ev := res.Data.InventoryEvents
		got[ev.Kind] = ev.Signature
	}
	want := map[string]*signature{"INVENTORY_CREATED": nil, "FULLY_SIGNED": nil,
		"AGENT_SIGNED": {Party: "AGENT", SignerName: "Ana Gómez", Method: "CREDENTIAL", Remote: true},
		"OWNER_SIGNED": {Party: "OWNER", SignerName: "Luis Pérez", Method: "CREDENTIAL"}}
	for kind, w := range want {
		g, ok := got[kind]
		switch {
		case !ok:
			t.Errorf("no %s event", kind)
		case (g == nil) != (w == nil) || g != nil && *g != *w:
			t.Errorf("%s: signature %+v; want %+v", kind, g, w)
		}
	}
}
