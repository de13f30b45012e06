package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// operation sends query over c as subscription id and returns its answer:
// its data and errors, or the error message gqlgen's transport sends for a
// refused one.
func (c *wsClient) operation(id, query string) (json.RawMessage, []struct {
	Message    string
	Extensions map[string]any
}) {
	c.t.Helper()
	c.subscribe(id, query, nil)
	for {
		m, err := c.next(20 * time.Second)
		if err != nil {
			c.t.Fatalf("operation %s: %v", id, err)
		}
		if m.ID != id {
			continue
		}
		var res struct {
			Data   json.RawMessage
			Errors []struct {
				Message    string
				Extensions map[string]any
			}
		}
		switch m.Type {
		case "next":
			if err := json.Unmarshal(m.Payload, &res); err != nil {
				c.t.Fatalf("operation %s: %s", id, m.Payload)
			}
			return res.Data, res.Errors
		case "error":
			if err := json.Unmarshal(m.Payload, &res.Errors); err != nil {
				c.t.Fatalf("operation %s: %s", id, m.Payload)
			}
			return nil, res.Errors
		}
	}
}

// countingVerifier counts the verifications of key.
type countingVerifier struct {
	auth.Verifier
	key      string
	verified atomic.Int64
}

func (v *countingVerifier) Verify(ctx context.Context, credential string) (auth.Caller, error) {
	if credential == v.key {
		v.verified.Add(1)
	}
	return v.Verifier.Verify(ctx, credential)
}

func codeOf(errs []struct {
	Message    string
	Extensions map[string]any
}) string {
	if len(errs) == 0 {
		return ""
	}
	code, _ := errs[0].Extensions["code"].(string)
	return code
}

// TestOperationsOverAWebSocketPassTheGateOfRequests: each operation a
// WebSocket carries is charged to its caller's rate (the bucket its HTTP
// requests draw from), its price to its company's budget, and runs under
// the request deadline, as a request over HTTP does. One read key once got
// 2,880 queries a second answered this way, 55 times its budget in 5 s, and
// a document stopped at 10 s over HTTP ran 18 to 20 s.
func TestOperationsOverAWebSocketPassTheGateOfRequests(t *testing.T) {
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
	const small = `{ inventories(first: 1) { totalCount } }`

	t.Run("rate", func(t *testing.T) {
		one := newInstance(t, url, server.Options{Auth: auth.APIKey, Verifier: keys, Limiter: auth.NewLimiter(0.2, 4)})
		c, err := dialLive(t, one.srv.URL, map[string]any{"Authorization": "Bearer " + key}) // one of the burst
		if err != nil {
			t.Fatal(err)
		}
		var served, limited int
		for i := range 6 {
			data, errs := c.operation(string(rune('a'+i)), small)
			switch {
			case len(errs) == 0 && len(data) > 0:
				served++
			case codeOf(errs) == "RATE_LIMITED":
				limited++
			default:
				t.Errorf("operation %d: %s %+v", i, data, errs)
			}
		}
		if served != 3 || limited != 3 {
			t.Errorf("6 operations on a connection whose init took one of a burst of 4: %d served, %d RATE_LIMITED; want 3 and 3", served, limited)
		}
		// The same bucket as the key's requests over HTTP.
		status, header, body := request(t, http.MethodGet, one.srv.URL+"/api/v1/inventories", bearer(key), nil)
		if status != http.StatusTooManyRequests || header.Get("Retry-After") == "" {
			t.Errorf("a request over HTTP after the socket spent the rate: %d %s; want 429 with Retry-After", status, body)
		}
	})

	t.Run("throttle and memory of credentials", func(t *testing.T) {
		counting := &countingVerifier{Verifier: keys, key: key}
		one := newInstance(t, url, server.Options{Auth: auth.APIKey, Verifier: counting, Limiter: auth.NewLimiter(0.1, 3)})
		if status, _, body := request(t, http.MethodGet, one.srv.URL+"/api/v1/inventories", bearer(key), nil); status != http.StatusOK {
			t.Fatalf("the key over HTTP: %d %s", status, body)
		}
		// Guesses from this address, over the socket: refused, then
		// throttled without being verified, as over HTTP.
		var closes []string
		for i := range 5 {
			_, err := dialLive(t, one.srv.URL, map[string]any{"Authorization": "Bearer ik_guess" + string(rune('a'+i))})
			closes = append(closes, err.Error())
		}
		for i, reason := range closes {
			if want := map[bool]string{true: "invalid credential", false: "too many requests without a valid credential"}[i < 3]; !strings.Contains(reason, want) {
				t.Errorf("guess %d over the socket: %s; want %q", i, reason, want)
			}
		}
		// The throttled address's key, verified over HTTP moments ago, is
		// recognised by the same gate: not verified again, not queued.
		if _, err := dialLive(t, one.srv.URL, map[string]any{"Authorization": "Bearer " + key}); err != nil {
			t.Fatalf("the key over the socket from a throttled address: %v", err)
		}
		if n := counting.verified.Load(); n != 1 {
			t.Errorf("the key was verified %d times over HTTP and the socket; want once (the gate remembers it)", n)
		}
	})

	t.Run("budget", func(t *testing.T) {
		one := newInstance(t, url, server.Options{Auth: auth.APIKey, Verifier: keys,
			Share:  fairshare.NewQueue(server.ShareOptions(st, 0, store.DefaultAcquireTimeout)),
			Budget: fairshare.NewBudget(120_000, 100)})
		ide, err := os.ReadFile("../ide/example.graphql")
		if err != nil {
			t.Fatal(err)
		}
		c, err := dialLive(t, one.srv.URL, map[string]any{"Authorization": "Bearer " + key})
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for i := range 3 {
			_, errs := c.operation(string(rune('a'+i)), string(ide))
			codes = append(codes, codeOf(errs))
		}
		if codes[0] != "" || codes[1] != "" || codes[2] != "RATE_LIMITED" {
			t.Errorf("three operations of about 51,000 on a budget of 120,000: codes %q; want two served, then RATE_LIMITED", codes)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		// A deadline no read meets: the socket's operations and its
		// events' reads run out of it as requests over HTTP do.
		one := newInstance(t, url, server.Options{RequestTimeout: time.Nanosecond})
		writer := newInstance(t, url, server.Options{})
		c, err := dialLive(t, one.srv.URL, map[string]any{"X-Company-Id": company})
		if err != nil {
			t.Fatal(err)
		}
		if data, errs := c.operation("q", small); codeOf(errs) != "DEADLINE_EXCEEDED" {
			t.Errorf("a query past the deadline over the socket: %s %+v; want DEADLINE_EXCEEDED", data, errs)
		}
		prop := aPropertyOf(t, one.st, datagen.DemoCompanies[0])
		c.subscribe("s", eventsSubscription, map[string]any{"property": prop})
		time.Sleep(100 * time.Millisecond) // the subscription is registered
		createOn(t, writer.srv, prop)
		m, err := c.next(10 * time.Second)
		for err == nil && m.ID != "s" { // the query's complete
			m, err = c.next(10 * time.Second)
		}
		if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), "DEADLINE_EXCEEDED") {
			t.Errorf("an event whose read runs past the deadline: %s %s %v; want its inventory DEADLINE_EXCEEDED", m.Type, m.Payload, err)
		}
	})
}
