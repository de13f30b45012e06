package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// smallQuery is a realistic read: one page of one inventory and the count.
const smallQuery = `{ inventories(first: 1) { totalCount edges { node { id } } } }`

// limits are the limits an instance of these tests is built with; each
// instance gets its own Limiter and Budget, as each process does.
type limits struct {
	rate, restore float64
	burst         int
	capacity      float64
	perCompany    int
	// redisTimeout bounds each call to Redis: 1 s unless set, so that a
	// call slowed by a loaded test machine is not an outage the test did
	// not make (the slow Redis's test sets the service's 50 ms).
	redisTimeout time.Duration
}

// sharedInstance is an instance of the service on url, its limits kept in
// the Redis at redisURL ("": its own), logging what the shared limits say
// into logs.
type sharedInstance struct {
	*instance
	shared *sharedlimit.Redis
	logs   *apitest.LogBuffer
}

func newSharedInstance(t testing.TB, url, redisURL string, keys auth.Verifier, l limits) *sharedInstance {
	t.Helper()
	logs := &apitest.LogBuffer{}
	if l.redisTimeout == 0 {
		l.redisTimeout = time.Second
	}
	shared, err := sharedlimit.Open(redisURL, logs.Logger(slog.LevelInfo), sharedlimit.Options{Timeout: l.redisTimeout, Retry: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shared.Close() })
	opts := server.Options{Auth: auth.APIKey, Verifier: keys, Metrics: metrics.New(), SharedLimits: shared,
		Limiter: auth.NewSharedLimiter(l.rate, l.burst, shared)}
	if l.capacity > 0 {
		// The budget's key is the fair share's.
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Share = fairshare.NewQueue(server.ShareOptions(st, 0, store.DefaultAcquireTimeout))
		opts.Budget = fairshare.NewSharedBudget(l.capacity, l.restore, shared)
	}
	i := newInstanceWith(t, url, opts, live.Options{Shared: shared, PerCompany: l.perCompany})
	return &sharedInstance{instance: i, shared: shared, logs: logs}
}

// demoKey is a read key of the first demo company in the database at url.
func demoKey(t testing.TB, url string) (*auth.Keys, string) {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	keys := auth.NewKeys(st.Client)
	key, _, err := keys.Create(context.Background(), datagen.DemoCompanies[0], "shared-"+fmt.Sprint(time.Now().UnixNano()), auth.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	return keys, key
}

// spread sends n queries with key, in turn to each instance, as a load
// balancer spreads them, and counts those served; any answer but 200 or
// 429 fails the test (an outage of Redis is never the client's 5xx).
func spread(t *testing.T, key string, n int, to ...*sharedInstance) (served int) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": smallQuery})
	for i := range n {
		status, header, raw := request(t, http.MethodPost, to[i%len(to)].srv.URL+"/graphql", bearer(key), body)
		switch {
		case status == http.StatusOK && !strings.Contains(string(raw), `"errors"`):
			served++
		case status == http.StatusTooManyRequests && header.Get("Retry-After") != "":
		default:
			t.Fatalf("query %d: %d %.300s; want 200, or 429 with Retry-After", i, status, raw)
		}
	}
	return served
}

// within reports whether got is within a quarter of want.
func within(got, want int) bool {
	return float64(got) >= 0.75*float64(want) && float64(got) <= 1.25*float64(want)
}

// TestABurstOverTwoInstancesIsGrantedWhatOneGrants: with INVENTORY_REDIS_URL,
// a caller's rate and its company's cost budget are one bucket for every
// instance: a burst spread over two instances (two servers, one database,
// one Redis) is granted what one instance grants, where without Redis it
// is granted twice that, once by each.
func TestABurstOverTwoInstancesIsGrantedWhatOneGrants(t *testing.T) {
	rds := testdb.StartRedis(t)
	url := testdb.DemoRecords.URL(t)
	keys, key := demoKey(t, url)

	t.Run("rate", func(t *testing.T) {
		// A burst of 20 and nearly no refill: what is granted is the burst.
		l := limits{rate: 0.2, burst: 20}
		const n = 60
		one := spread(t, key, n, newSharedInstance(t, url, "", keys, l))
		apart := spread(t, key, n, newSharedInstance(t, url, "", keys, l), newSharedInstance(t, url, "", keys, l))
		together := spread(t, key, n, newSharedInstance(t, url, rds.URL(), keys, l), newSharedInstance(t, url, rds.URL(), keys, l))
		t.Logf("rate: one instance granted %d, two apart %d, two sharing Redis %d (of %d each)", one, apart, together, n)
		if !within(one, l.burst) {
			t.Fatalf("one instance granted %d of %d requests; want about its burst, %d", one, n, l.burst)
		}
		if !within(apart, 2*one) {
			t.Errorf("two instances without Redis granted %d; want about twice what one grants (%d): each its own", apart, 2*one)
		}
		if !within(together, one) {
			t.Errorf("two instances sharing Redis granted %d; want what one grants (%d), within 25%%", together, one)
		}
	})

	t.Run("cost budget", func(t *testing.T) {
		probe := newSharedInstance(t, url, "", keys, limits{})
		body, _ := json.Marshal(map[string]string{"query": smallQuery})
		_, _, raw := request(t, http.MethodPost, probe.srv.URL+"/graphql", bearer(key), body)
		var priced struct {
			Extensions struct {
				Cost struct{ RequestedQueryCost int }
			}
		}
		if err := json.Unmarshal(raw, &priced); err != nil || priced.Extensions.Cost.RequestedQueryCost == 0 {
			t.Fatalf("the query's price: %s (%v)", raw, err)
		}
		// A budget of ten of these queries, nearly no refill; no rate limit.
		l := limits{capacity: float64(10 * priced.Extensions.Cost.RequestedQueryCost), restore: 1}
		const n = 30
		one := spread(t, key, n, newSharedInstance(t, url, "", keys, l))
		apart := spread(t, key, n, newSharedInstance(t, url, "", keys, l), newSharedInstance(t, url, "", keys, l))
		together := spread(t, key, n, newSharedInstance(t, url, rds.URL(), keys, l), newSharedInstance(t, url, rds.URL(), keys, l))
		t.Logf("budget: one instance granted %d, two apart %d, two sharing Redis %d (of %d each)", one, apart, together, n)
		if one != 10 {
			t.Fatalf("one instance granted %d queries on a budget of 10 of them; want 10", one)
		}
		if !within(apart, 2*one) {
			t.Errorf("two instances without Redis granted %d; want about twice what one grants (%d)", apart, 2*one)
		}
		if !within(together, one) {
			t.Errorf("two instances sharing Redis granted %d; want what one grants (%d), within 25%%", together, one)
		}
	})
}

// metricValue reads one sample of srv's /metrics ("" when absent).
func metricValue(t *testing.T, srv *apitest.Server, name string) string {
	t.Helper()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	for line := range strings.SplitSeq(string(text), "\n") {
		if value, ok := strings.CutPrefix(line, name+" "); ok {
			return value
		}
	}
	return ""
}

// readyz is srv's /readyz answer.
func readyz(t *testing.T, srv *apitest.Server) (int, string) {
	t.Helper()
	status, _, body := request(t, http.MethodGet, srv.URL+"/readyz", nil, nil)
	return status, string(body)
}

const outageWarning = "Redis does not answer"

// TestARedisOutageFallsBackToEachInstancesOwnLimits: Redis stopped
// mid-run, the instances keep answering (no 5xx), each on its own counters
// (the caller spread over two gets one burst from each), each says so once
// at WARN however many requests it decides meanwhile, counts it in
// inventory_shared_limits_fallbacks_total and in /readyz. Redis started
// again on the same port, they share one bucket again.
func TestARedisOutageFallsBackToEachInstancesOwnLimits(t *testing.T) {
	rds := testdb.StartRedis(t)
	url := testdb.DemoRecords.URL(t)
	keys, key := demoKey(t, url)
	l := limits{rate: 0.2, burst: 10}
	one, two := newSharedInstance(t, url, rds.URL(), keys, l), newSharedInstance(t, url, rds.URL(), keys, l)

	if got := spread(t, key, 30, one, two); !within(got, l.burst) {
		t.Fatalf("with Redis, two instances granted %d; want one burst, %d", got, l.burst)
	}
	if status, body := readyz(t, one.srv); status != http.StatusOK || strings.Contains(body, "per instance") {
		t.Errorf("/readyz with Redis: %d %s; want 200 ok", status, body)
	}

	rds.Stop()
	if got := spread(t, key, 40, one, two); !within(got, 2*l.burst) {
		t.Errorf("with Redis down, two instances granted %d; want a burst from each, %d", got, 2*l.burst)
	}
	for name, i := range map[string]*sharedInstance{"one": one, "two": two} {
		if n := strings.Count(i.logs.String(), outageWarning); n != 1 || !strings.Contains(i.logs.String(), `"level":"WARN"`) {
			t.Errorf("instance %s: %d warnings of the outage over 20 requests, want 1:\n%s", name, n, i.logs.String())
		}
		if v := metricValue(t, i.srv, "inventory_shared_limits_fallbacks_total"); v != "1" {
			t.Errorf("instance %s: inventory_shared_limits_fallbacks_total %q, want 1", name, v)
		}
		if v := metricValue(t, i.srv, "inventory_shared_limits_redis"); v != "0" {
			t.Errorf("instance %s: inventory_shared_limits_redis %q during the outage, want 0", name, v)
		}
		if status, body := readyz(t, i.srv); status != http.StatusOK || !strings.Contains(body, "limits per instance") || !strings.Contains(body, "INVENTORY_REDIS_URL") {
			t.Errorf("instance %s's /readyz during the outage: %d %s; want 200, saying the limits are per instance", name, status, body)
		}
	}

	rds.Start()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) &&
		(!one.shared.Shared() || !two.shared.Shared()); time.Sleep(20 * time.Millisecond) {
	}
	if !one.shared.Shared() || !two.shared.Shared() {
		t.Fatalf("Redis back for 10 s: shared %v and %v; want both back on it", one.shared.Shared(), two.shared.Shared())
	}
	// The restarted Redis is empty: the caller's shared bucket is full.
	if got := spread(t, key, 30, one, two); !within(got, l.burst) {
		t.Errorf("Redis back, two instances granted %d; want one burst again, %d", got, l.burst)
	}
	for name, i := range map[string]*sharedInstance{"one": one, "two": two} {
		if status, body := readyz(t, i.srv); status != http.StatusOK || strings.Contains(body, "per instance") {
			t.Errorf("instance %s's /readyz with Redis back: %d %s; want ok", name, status, body)
		}
		if v := metricValue(t, i.srv, "inventory_shared_limits_fallbacks_total"); v != "1" {
			t.Errorf("instance %s: inventory_shared_limits_fallbacks_total %q after one outage, want 1", name, v)
		}
	}
}

// TestASlowRedisIsAnOutageToo: a Redis that takes over the timeout to
// answer is not waited for: the request is decided here and served, the
// outage said and counted once, and Redis used again once it answers in
// time. (The timeout here is 250 ms, not the service's 50 ms, so that a
// call slowed by a loaded test machine is not taken for the stall.)
func TestASlowRedisIsAnOutageToo(t *testing.T) {
	rds := testdb.StartRedis(t)
	url := testdb.DemoRecords.URL(t)
	keys, key := demoKey(t, url)
	one := newSharedInstance(t, url, rds.URL(), keys, limits{rate: 100, burst: 100, redisTimeout: 250 * time.Millisecond})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !one.shared.Shared(); time.Sleep(20 * time.Millisecond) {
	}
	if got := spread(t, key, 1, one); got != 1 || !one.shared.Shared() {
		t.Fatalf("before the stall: %d served, shared %v", got, one.shared.Shared())
	}
	fallbacks := func() int {
		n, _ := strconv.Atoi(metricValue(t, one.srv, "inventory_shared_limits_fallbacks_total"))
		return n
	}
	fallbacksBefore, warningsBefore := fallbacks(), strings.Count(one.logs.String(), outageWarning)
	admin, err := redis.ParseURL(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(admin)
	defer client.Close()
	// Every client's commands wait for 3 s: a Redis that stalls.
	if err := client.Do(context.Background(), "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := spread(t, key, 1, one); got != 1 {
		t.Errorf("during the stall: the request was not served")
	}
	stalled := time.Since(start) < 3*time.Second // else the stall ended before what follows is read
	if stalled && (one.shared.Shared() || fallbacks() != fallbacksBefore+1 || strings.Count(one.logs.String(), outageWarning) != warningsBefore+1) {
		t.Errorf("a stalled Redis: shared %v, fallbacks %d (before %d); want an outage, said and counted once:\n%s", one.shared.Shared(),
			fallbacks(), fallbacksBefore, one.logs.String())
	}
	if got := spread(t, key, 4, one); got != 4 {
		t.Errorf("during the stall: %d of 4 more served, want all, on this instance's counters", got)
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !one.shared.Shared(); time.Sleep(20 * time.Millisecond) {
	}
	if !one.shared.Shared() {
		t.Error("15 s after the stall began: the limits are still per instance")
	}
	if stalled && strings.Count(one.logs.String(), outageWarning) != warningsBefore+1 {
		t.Errorf("after the stall: %d warnings of it, want 1:\n%s", strings.Count(one.logs.String(), outageWarning)-warningsBefore, one.logs.String())
	}
}

// TestSubscriptionCapsAreSharedAcrossInstances: a company bounded to 3
// subscriptions holds 3 in all, however they are spread: the fourth is
// refused on either instance, and a place one instance gives back is
// another's to take.
func TestSubscriptionCapsAreSharedAcrossInstances(t *testing.T) {
	rds := testdb.StartRedis(t)
	url := testdb.DemoRecords.URL(t)
	keys, key := demoKey(t, url)
	l := limits{perCompany: 3}
	one, two := newSharedInstance(t, url, rds.URL(), keys, l), newSharedInstance(t, url, rds.URL(), keys, l)
	init := map[string]any{"Authorization": "Bearer " + key}
	dial := func(i *sharedInstance) *wsClient {
		c, err := dialLive(t, i.srv.URL, init)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1, c2 := dial(one), dial(two)
	// subscribe reports whether the subscription was taken: its Hub counts
	// it, or it is answered an error.
	subscribe := func(c *wsClient, i *sharedInstance, id string) (bool, string) {
		before := i.hub.Stats().Subscribers
		c.subscribe(id, eventsSubscription, nil)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if i.hub.Stats().Subscribers > before {
				return true, ""
			}
			if m, err := c.next(20 * time.Millisecond); err == nil && m.ID == id {
				return false, m.Type + " " + string(m.Payload)
			}
		}
		t.Fatalf("subscription %s: neither taken nor refused within 5 s", id)
		return false, ""
	}
	for _, s := range []struct {
		c  *wsClient
		i  *sharedInstance
		id string
	}{{c1, one, "a"}, {c2, two, "b"}, {c1, one, "c"}} {
		if ok, refusal := subscribe(s.c, s.i, s.id); !ok {
			t.Fatalf("subscription %s of 3: refused %s", s.id, refusal)
		}
	}
	for name, s := range map[string]struct {
		c *wsClient
		i *sharedInstance
	}{"one": {c1, one}, "two": {c2, two}} {
		ok, refusal := subscribe(s.c, s.i, "over-"+name)
		if ok || !strings.Contains(refusal, "RATE_LIMITED") || !strings.Contains(refusal, "across the instances") {
			t.Errorf("a fourth subscription on instance %s: taken %v %s; want RATE_LIMITED, across the instances", name, ok, refusal)
		}
	}
	// One ends on instance one; instance two may take its place.
	c1.send(wsMessage{ID: "a", Type: "complete"})
	var taken bool
	for deadline := time.Now().Add(5 * time.Second); !taken && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		taken, _ = subscribe(c2, two, fmt.Sprintf("after-%d", time.Now().UnixNano()))
	}
	if !taken {
		t.Error("a place given back on instance one: instance two did not take it within 5 s")
	}
}
