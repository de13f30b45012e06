package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"

	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/fairshare"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// LiveOptions bound the connections that carry subscriptions.
type LiveOptions struct {
	// Hub routes the writes to subscriptions; nil: none are served.
	Hub *live.Hub
	// PerConnection bounds a WebSocket connection's subscriptions
	// (DefaultSubscriptionsPerConnection when 0).
	PerConnection int
	// Heartbeat is how often a connection is pinged (a graphql-transport-ws
	// ping it must answer; an SSE comment) (DefaultHeartbeat when 0).
	Heartbeat time.Duration
	// Idle closes a WebSocket connection without a subscription for that
	// long (DefaultIdle when 0).
	Idle time.Duration
	// Recheck is how often a connection's credential is verified again: a
	// revoked key's subscriptions end within it (DefaultRecheck when 0).
	Recheck time.Duration
}

// Defaults of LiveOptions.
const (
	DefaultSubscriptionsPerConnection = 20
	DefaultHeartbeat                  = 15 * time.Second
	DefaultIdle                       = 5 * time.Minute
	DefaultRecheck                    = 30 * time.Second
)

// The close codes the service sends: 1012 (service restart) at shutdown,
// on which graphql-ws reconnects (to another instance); 4403 for a
// credential refused or revoked, on which graphql-ws retries a few times
// by default (Forbidden may change), so clients should not retry it
// (shouldRetry), as the README's example does.
const (
	closeRestart   = 1012
	closeForbidden = 4403
)

// isLive reports whether r opens a subscription's connection: a WebSocket
// upgrade or an SSE stream at /graphql. Such a request lives as long as its
// subscriptions, so the request deadline and the fair share's places, made
// for answers, do not apply; LiveOptions bound it instead.
func isLive(r *http.Request) bool {
	return r.URL.Path == "/graphql" && (isUpgrade(r) || sse.Supports(r) && !takesAnAnswer(r))
}

// takesAnAnswer reports whether a request accepts a GraphQL answer in one
// body (or in parts): urql offers text/event-stream beside JSON on every
// query and mutation, which are then answered as queries are, not kept open
// as a stream; graphql-sse, and urql's subscriptions, accept the stream
// alone (or with multipart/mixed).
func takesAnAnswer(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "application/json") || strings.Contains(accept, "application/graphql-response+json")
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

var sse = transport.SSE{}

// liveConns are the connections open, closed together on shutdown.
type liveConns struct {
	opts LiveOptions
	// authn authenticates a WebSocket's connection_init and every recheck
	// of a connection's credential, as it does every HTTP request.
	authn *auth.Authenticator
	// gate holds each operation a connection carries to a request's bounds.
	gate    operationGate
	origins []string

	mu      sync.Mutex
	open    map[*liveConn]struct{}
	closing bool
	count   atomic.Int64
}

// liveConn is one connection: its WebSocket (nil for SSE, and until
// accepted), and how to end it.
type liveConn struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	ws     transport.WebsocketConn
	ended  bool
}

// accepted notes the connection's WebSocket.
func (c *liveConn) accepted(ws transport.WebsocketConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ws = ws
}

// end closes the connection with code and reason, once.
func (c *liveConn) end(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = true
	if c.ws != nil {
		_ = c.ws.WriteClose(code, reason)
	}
	c.cancel()
}

type liveConnKey struct{}

func newLiveConns(opts LiveOptions, origins []string, authn *auth.Authenticator, gate operationGate) *liveConns {
	if opts.PerConnection <= 0 {
		opts.PerConnection = DefaultSubscriptionsPerConnection
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Recheck <= 0 {
		opts.Recheck = DefaultRecheck
	}
	return &liveConns{opts: opts, authn: authn, gate: gate, origins: origins, open: map[*liveConn]struct{}{}}
}

// closeAll ends every connection with 1012 (service restart): clients
// reconnect, to another instance.
func (l *liveConns) closeAll() {
	l.mu.Lock()
	l.closing = true
	conns := make([]*liveConn, 0, len(l.open))
	for c := range l.open {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.end(closeRestart, "the server is shutting down: reconnect")
	}
}

// Open is how many connections are open, for /metrics.
func (l *liveConns) Open() int { return int(l.count.Load()) }

// serve serves a live request, which reached here past the authentication
// of every request (SSE) or past none (a WebSocket upgrade: browsers cannot
// set its headers, so the credential comes in connection_init).
func (l *liveConns) serve(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &liveConn{cancel: cancel}
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	}
	l.open[c] = struct{}{}
	l.mu.Unlock()
	l.count.Add(1)
	defer func() {
		l.mu.Lock()
		delete(l.open, c)
		l.mu.Unlock()
		l.count.Add(-1)
	}()
	ctx = live.WithConnection(context.WithValue(ctx, liveConnKey{}, c), l.opts.PerConnection)
	r = r.WithContext(ctx)
	if !isUpgrade(r) {
		// An SSE stream outlives the server's write timeout, made for answers.
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		_ = rc.SetReadDeadline(time.Time{})
		go l.watch(ctx, c, r, r.Header.Clone(), false)
		// Its one operation was charged to the caller's rate as its request
		// was; its price goes to the company's budget.
		r = r.WithContext(graphql.StartOperationTrace(fairshare.WithKey(ctx, fairshare.KeyOf(r))))
		// A proxy that buffers answers (nginx does by default) would hold
		// the events until its buffer fills: nginx reads this header.
		w.Header().Set("X-Accel-Buffering", "no")
		transport.SSE{KeepAlivePingInterval: l.opts.Heartbeat}.Do(w, r, l.gate.executor(exec, nil))
		return
	}
	header := r.Header.Clone()
	r = r.WithContext(tenant.WithWebSocket(ctx)) // its refusals name connection_init
	ws := transport.Websocket{
		Implementation: closableWebsocket{accept: l.acceptOptions()},
		InitTimeout:    10 * time.Second,
		// graphql-transport-ws: the server pings, and a client that does
		// not answer within two of them is gone.
		PingPongInterval: l.opts.Heartbeat,
		InitFunc: func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			h := header.Clone()
			for key, value := range payload {
				if s, ok := value.(string); ok {
					h.Set(key, s)
				}
			}
			authed, err := l.authenticate(ctx, r, h)
			if err != nil {
				ctx = transport.WithWebsocketCloseCode(ctx, closeForbidden)
				return transport.AppendCloseReason(ctx, truncateReason(err.Error())), nil, err
			}
			go l.watch(authed, c, r, h, true)
			return authed, nil, nil
		},
	}
	// Each operation the socket carries is charged to the caller's rate.
	ws.Do(w, r, l.gate.executor(exec, l.authn))
}

// authenticate authenticates a connection from its credential and company
// headers (the upgrade's, with connection_init's payload over them) and its
// URL's x-company-id, as every request is: the context bound to the caller,
// under the fair-share key its operations' prices are charged to, or the
// refusal. A connection names its company, as its every subscription
// must: without one, or with one that is no company, it is refused as a
// bad credential is (4403), not acknowledged to fail each operation.
func (l *liveConns) authenticate(ctx context.Context, conn *http.Request, header http.Header) (context.Context, error) {
	authed, refusal := l.authn.Authenticate(ctx, conn, header)
	if refusal != nil {
		return ctx, refusal
	}
	if _, bound := tenant.Bound(authed); !bound {
		authed = tenant.FromRequest(authed, header, conn.URL.RawQuery)
	}
	if _, err := tenant.CompanyFrom(authed); err != nil {
		return ctx, err
	}
	probe := conn.Clone(authed)
	probe.Header = header
	return fairshare.WithKey(authed, fairshare.KeyOf(probe)), nil
}

// watch ends the connection when its credential is refused on a recheck
// (every Recheck: a revoked API key), and, when idle counts (WebSocket),
// once it has held no subscription for Idle. One goroutine a connection.
func (l *liveConns) watch(ctx context.Context, c *liveConn, conn *http.Request, header http.Header, idle bool) {
	recheck := time.NewTicker(l.opts.Recheck)
	defer recheck.Stop()
	var idleTick <-chan time.Time
	if idle {
		t := time.NewTicker(min(l.opts.Idle/4, 15*time.Second))
		defer t.Stop()
		idleTick = t.C
	}
	idleSince := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-recheck.C:
			if _, err := l.authenticate(ctx, conn, header); err != nil && ctx.Err() == nil {
				c.end(closeForbidden, truncateReason(err.Error()))
				return
			}
		case now := <-idleTick:
			if live.Subscriptions(ctx) > 0 {
				idleSince = now
			} else if now.Sub(idleSince) >= l.opts.Idle {
				c.end(int(coderws.StatusNormalClosure), "idle: no subscription")
				return
			}
		}
	}
}

// truncateReason keeps a close reason within the 123 bytes a WebSocket
// close frame allows, and valid UTF-8 (a name in it may be cut mid-rune).
func truncateReason(s string) string {
	if len(s) <= 120 {
		return s
	}
	return strings.ToValidUTF8(s[:117], "") + "..."
}

func (l *liveConns) acceptOptions() coderws.AcceptOptions {
	// The credential is sent in connection_init, never by the browser on
	// its own (no cookies are read), so another origin's page gains nothing
	// a script of its own would not have.
	if len(l.origins) == 0 || l.origins[0] == "*" {
		return coderws.AcceptOptions{InsecureSkipVerify: true}
	}
	var patterns []string
	for _, o := range l.origins {
		patterns = append(patterns, strings.TrimPrefix(strings.TrimPrefix(o, "https://"), "http://"))
	}
	return coderws.AcceptOptions{OriginPatterns: patterns}
}

// closableWebsocket accepts a WebSocket with gqlgen's coder/websocket
// adapter, and hands it to its liveConn, so that a revoked credential or a
// shutdown can close it with the code it calls for.
type closableWebsocket struct{ accept coderws.AcceptOptions }

func (cw closableWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	ws, err := transport.CoderWebsocketImplementation{AcceptOptions: cw.accept}.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	if c, ok := r.Context().Value(liveConnKey{}).(*liveConn); ok {
		c.accepted(ws)
	}
	return ws, nil
}
