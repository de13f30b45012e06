// Package sharedlimit keeps the limits that must hold across instances in
// Redis (INVENTORY_REDIS_URL): each caller's rate (internal/auth), each
// company's cost budget (internal/fairshare.Budget) and each company's
// subscriptions (internal/live), so that a caller gets the same budget
// however a load balancer spreads its requests.
//
// It is the one place that talks to Redis and decides when not to. Every
// call is bounded (Options.Timeout, 50 ms by default) and makes one round
// trip; a call that fails or runs over starts an outage: from then on no
// call goes to Redis, each caller decides with its own in-process counters
// (as without Redis), one WARN says so and a metric counts it, and a probe
// in the background finds Redis again (Options.Retry). A nil *Redis is "no
// Redis": every answer says to decide locally.
package sharedlimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds each call: past it Redis counts as down, and the
	// request is decided here rather than kept waiting.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultRetry is how often Redis is probed during an outage.
	DefaultRetry = time.Second
	// DefaultLease is how long a subscription's place in its company's count
	// outlives the last word of the instance holding it: a crashed
	// instance's places are free again within it.
	DefaultLease = 30 * time.Second
)

// Options bound the calls to Redis.
type Options struct {
	// Timeout bounds each call (DefaultTimeout when 0).
	Timeout time.Duration
	// Retry is how often Redis is probed while it is down (DefaultRetry
	// when 0).
	Retry time.Duration
	// Lease is how long a subscription's place lasts unless renewed
	// (DefaultLease when 0); it is renewed every third of it.
	Lease time.Duration
}

// keyPrefix namespaces the service's keys, should the Redis serve others.
const keyPrefix = "inventory:"

// Redis holds the shared limits; nil: none (every caller decides locally).
type Redis struct {
	client *redis.Client
	gcra   *redis_rate.Limiter
	log    *slog.Logger
	opts   Options
	where  string // the URL without its password, for the log

	// down is set for an outage: no call goes to Redis until a probe
	// answers.
	down atomic.Bool
	// outages counts the outages; local, the decisions taken here
	// meanwhile.
	outages, local atomic.Int64

	mu sync.Mutex
	// slots are the subscriptions' places this instance holds: member →
	// company key. The renewal re-adds them all, so that those taken during
	// an outage (or lost with a restarted Redis) are counted again.
	slots map[string]string

	stop context.CancelFunc
	done chan struct{}
}

// Open connects to the Redis at rawURL (redis:// or rediss://, as go-redis
// reads it) and starts its probe and the subscriptions' renewal; nil when
// rawURL is empty. An unreachable Redis is no error: the instance starts
// on its own counters, and says so.
func Open(rawURL string, log *slog.Logger, opts Options) (*Redis, error) {
	if rawURL == "" {
		return nil, nil
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	// One try per call, each bounded: a slow Redis costs a request at most
	// Timeout, once, before the outage starts.
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = opts.Timeout, opts.Timeout, opts.Timeout, opts.Timeout
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	// Nothing on connect but the handshake: a connection made during a
	// request is one more round trip, no more.
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	where := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		where = u.Redacted()
	}
	client := redis.NewClient(o)
	r := &Redis{client: client, gcra: redis_rate.NewLimiter(client), log: log, opts: opts, where: where,
		slots: map[string]string{}, done: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	if err := r.ping(ctx); err != nil {
		r.fail(err)
	}
	go r.run(ctx)
	return r, nil
}

// Close stops the probe and the renewal and closes the connections; the
// places of this instance's subscriptions expire with their lease.
func (r *Redis) Close() error {
	if r == nil {
		return nil
	}
	r.stop()
	<-r.done
	return r.client.Close()
}

// Shared reports whether the limits are kept in Redis now: false during an
// outage, when each instance keeps its own (and for a nil Redis).
func (r *Redis) Shared() bool { return r != nil && !r.down.Load() }

// Stats are the figures for /metrics.
type Stats struct {
	// Shared: the limits are kept in Redis now.
	Shared bool
	// Outages is how many times this instance fell back to its own
	// counters; LocalDecisions, how many decisions it took with them.
	Outages, LocalDecisions int64
}

// Stats reads the figures.
func (r *Redis) Stats() Stats {
	return Stats{Shared: r.Shared(), Outages: r.outages.Load(), LocalDecisions: r.local.Load()}
}

// available says whether to call Redis; when not, the caller decides
// locally, and that is counted.
func (r *Redis) available() bool {
	if r == nil {
		return false
	}
	if r.down.Load() {
		r.local.Add(1)
		return false
	}
	return true
}

// fail starts an outage, once: one WARN, one count.
func (r *Redis) fail(err error) {
	if r.down.CompareAndSwap(false, true) {
		r.outages.Add(1)
		r.local.Add(1)
		r.log.Warn("shared limits: Redis does not answer; rate limits, cost budgets and subscription caps are per instance until it does",
			"redis", r.where, "error", err.Error(), "timeout", r.opts.Timeout, "probe_every", r.opts.Retry)
		return
	}
	r.local.Add(1)
}

func (r *Redis) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	return r.client.Ping(ctx).Err()
}

// run probes Redis during an outage, every Retry, and renews this
// instance's subscriptions' places every third of their lease.
func (r *Redis) run(ctx context.Context) {
	defer close(r.done)
	probe := time.NewTicker(r.opts.Retry)
	defer probe.Stop()
	renew := time.NewTicker(r.opts.Lease / 3)
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-probe.C:
			if !r.down.Load() {
				continue
			}
			if err := r.ping(ctx); err != nil {
				continue
			}
			// Back: re-count this instance's subscriptions first, those
			// taken meanwhile included, so that the caps hold at once.
			if err := r.renew(ctx); err != nil {
				continue
			}
			if r.down.CompareAndSwap(true, false) {
				r.log.Info("shared limits: Redis answers again; the limits are shared again", "redis", r.where)
			}
		case <-renew.C:
			if r.down.Load() {
				continue
			}
			if err := r.renew(ctx); err != nil && ctx.Err() == nil {
				r.fail(err)
			}
		}
	}
}

// Rate is a rate limit: PerSecond on average, Burst at once.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Result is what Redis decided.
type Result struct {
	Allowed bool
	// Available is what the bucket holds after the call.
	Available float64
	// RetryAfter is how long until the call would be allowed (refused only).
	RetryAfter time.Duration
}

// Take takes n from key's bucket (GCRA, one round trip), or refuses and
// takes nothing when it holds less than n. ok is false when Redis is not
// to be asked (nil, or down): the caller decides with its own bucket.
func (r *Redis) Take(key string, rate Rate, n int) (res Result, ok bool) {
	if !r.available() {
		return Result{}, false
	}
	limit := gcraLimit(rate)
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
	defer cancel()
	got, err := r.gcra.AllowN(ctx, keyPrefix+key, limit, n)
	if err != nil {
		r.fail(err)
		return Result{}, false
	}
	// The bucket's level from when it is full again (ResetAfter), which
	// redis_rate reports both ways, unlike Remaining (0 when refused).
	available := math.Max(0, float64(rate.Burst)-got.ResetAfter.Seconds()*rate.PerSecond)
	if got.Allowed == 0 {
		return Result{Available: available, RetryAfter: got.RetryAfter}, true
	}
	return Result{Allowed: true, Available: available}, true
}

// gcraLimit expresses rate as redis_rate's whole events per period: the
// emission interval, Period/Rate, is 1/PerSecond, whatever the fraction.
func gcraLimit(rate Rate) redis_rate.Limit {
	events := int(math.Max(1, math.Min(1e6, math.Round(rate.PerSecond*1000))))
	return redis_rate.Limit{Rate: events, Burst: rate.Burst,
		Period: time.Duration(float64(events) / rate.PerSecond * float64(time.Second))}
}

// Scripts of the subscriptions' count: a sorted set per company of places,
// scored by when each lease ends, on Redis's clock (the instances' clocks
// may differ).
var (
	// acquire drops the expired places, then adds one unless max are held.
	acquire = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)
	// renewal extends (or adds back) an instance's places of one company.
	renewal = redis.NewScript(`
local t = redis.call('TIME')
local until_ = t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], until_, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)
)

// Acquire takes one of key's max places for a subscription (one round
// trip). shared reports whether Redis decided (allowed then says how);
// when not, the caller decides with its own count, and calls release if
// it refuses. release gives the place back; call it once the subscription
// ends (it does not wait for Redis).
func (r *Redis) Acquire(key string, max int) (release func(), shared, allowed bool) {
	if r == nil {
		return func() {}, false, false
	}
	member := uuid.NewString()
	hold := func() func() {
		r.mu.Lock()
		r.slots[member] = key
		r.mu.Unlock()
		return func() { r.release(key, member) }
	}
	if !r.available() {
		// Held here all the same: the renewal counts it in Redis once
		// Redis is back.
		return hold(), false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
	defer cancel()
	got, err := acquire.Run(ctx, r.client, []string{keyPrefix + "subscriptions:" + key}, max, r.opts.Lease.Milliseconds(), member).Int()
	if err != nil {
		r.fail(err)
		return hold(), false, false
	}
	if got == 0 {
		return func() {}, true, false
	}
	return hold(), true, true
}

// release drops member from key's count, in the background: it is called
// under the Hub's lock. Should Redis not take it, the lease ends it.
func (r *Redis) release(key, member string) {
	r.mu.Lock()
	_, held := r.slots[member]
	delete(r.slots, member)
	r.mu.Unlock()
	if !held || r.down.Load() {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.Timeout)
		defer cancel()
		_ = r.client.ZRem(ctx, keyPrefix+"subscriptions:"+key, member).Err()
	}()
}

// renew extends the lease of every place this instance holds, in one
// pipeline.
func (r *Redis) renew(ctx context.Context) error {
	r.mu.Lock()
	byKey := map[string][]any{}
	for member, key := range r.slots {
		byKey[key] = append(byKey[key], member)
	}
	r.mu.Unlock()
	if len(byKey) == 0 {
		return nil
	}
	// The pipeline's commands are sent together: one round trip, bounded
	// more loosely than a request's call, since no request waits for it.
	// EVAL, not EVALSHA: a pipeline cannot fall back on NOSCRIPT, which a
	// restarted Redis answers.
	ctx, cancel := context.WithTimeout(ctx, 10*r.opts.Timeout)
	defer cancel()
	pipe := r.client.Pipeline()
	lease := strconv.FormatInt(r.opts.Lease.Milliseconds(), 10)
	for key, members := range byKey {
		renewal.Eval(ctx, pipe, []string{keyPrefix + "subscriptions:" + key}, append([]any{lease}, members...)...)
	}
	_, err := pipe.Exec(ctx)
	return err
}
