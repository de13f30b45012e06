// Package auth binds each request to the company its credential names: an
// API key kept (hashed) in the database, or an OpenID Connect token (JWT).
// In header mode, the default, the company is the X-Company-Id a trusted
// gateway sets, as before. Every request also passes a per-caller rate limit.
package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Mode is how callers are authenticated.
type Mode string

const (
	// Header trusts the X-Company-Id header (a gateway in front authenticates).
	Header Mode = "header"
	// APIKey takes keys made with `inventoryd apikey create`.
	APIKey Mode = "apikey"
	// JWT takes OpenID Connect access tokens whose claim names the company.
	JWT Mode = "jwt"
)

// ParseMode reads the INVENTORY_AUTH setting.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Header, APIKey, JWT:
		return m, nil
	}
	return "", fmt.Errorf("auth %q: use header, apikey or jwt", s)
}

// Caller is who a verified credential names.
type Caller struct {
	Company uuid.UUID
	// Name is the API key's name or the token's subject: the caller in the
	// audit lines and the rate limiter's key.
	Name string
	// MayWrite: the credential's scope includes writing (a key made with
	// --scope write, a token whose scope claim says write).
	MayWrite bool
}

// Verifier checks a credential and says whom it names.
type Verifier interface {
	Verify(ctx context.Context, credential string) (Caller, error)
}

// ErrInvalid is a credential that names nobody: unknown, revoked, expired,
// for another audience or issuer, or badly signed. Its message is the
// client's; errors that are not ErrInvalid (the database down) are not the
// credential's fault and keep their own status.
var ErrInvalid = errors.New("invalid credential")

// invalid is an ErrInvalid with the reason the client reads.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Options configure Middleware.
type Options struct {
	Mode     Mode
	Verifier Verifier // for APIKey and JWT
	// Limiter limits each caller's rate; nil, none.
	Limiter *Limiter
	// Open reports the requests served to anyone (health, the IDE page, the
	// OpenAPI document, signed photo URLs).
	Open func(*http.Request) bool
	// WriteError answers a refused request in the shape of what it asked
	// for (REST's error body, or a GraphQL error).
	WriteError func(http.ResponseWriter, *http.Request, error)
	Log        *slog.Logger
}

// Authenticator decides whom each request's credential names, for every
// transport: the HTTP middleware (Middleware), a WebSocket's connection_init
// and its rechecks, SSE and the signing page all call Authenticate, through
// one gate (its throttled lane and its memory of credentials verified
// lately) and one rate limiter.
//
// A credential that verifies is judged by its own rate only, never by its
// address's: many callers share an address (a NAT, an office proxy), and one
// of them sending bad credentials must not lock the others out. An address
// that has sent a burst of bad ones is "throttled": its credentials are
// still checked, but through a narrow lane (one verification at a time for
// all throttled addresses), so that its guesses cost at most one lookup or
// signature check at a time, and its refusals are neither verified twice nor
// logged. Credentials verified lately skip the lane (recognised in memory),
// so a busy shared key does not queue behind an attacker's guesses.
type Authenticator struct {
	o    Options
	gate *gate
}

// New returns the Authenticator of o.
func New(o Options) *Authenticator { return &Authenticator{o: o, gate: newGate()} }

// Refusal is a request Authenticate refused: Err is the client's answer (its
// RetryAfter set for RATE_LIMITED), Challenge the WWW-Authenticate header
// of an UNAUTHENTICATED one; Logged is set for the refusals of callers (not
// of a throttled address, each of whose refusals logged would let it fill
// the logs at its own pace, nor failures of the service, which the error
// presenter logs).
type Refusal struct {
	Err       error
	Challenge string
	Logged    bool
	// caller is whom the refused credential named, for the log line.
	caller string
}

func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap lets apperr read the answer's code and Retry-After.
func (r *Refusal) Unwrap() error { return r.Err }

// Authenticate charges r to its caller's rate and returns r's context bound
// to the caller its credential names (in header mode: as it was, the company
// header being the gateway's word), or why not. header is the request's
// credential and company headers: r's own over HTTP, connection_init's
// payload over a WebSocket.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request, header http.Header) (context.Context, *Refusal) {
	o := a.o
	// Header mode asks for no credential: at most a rate per address.
	if o.Mode == Header {
		key := "address " + clientAddress(r)
		if refusal := o.limited(key, ""); refusal != nil {
			return ctx, refusal
		}
		return withRateKey(ctx, key), nil
	}
	refusals := "refused " + clientAddress(r)
	retry, throttled := o.Limiter.Exhausted(refusals)
	credential, err := credentialOf(header)
	if err != nil {
		// No credential, or a malformed header: nothing here can be valid.
		if throttled {
			return ctx, throttledRefusal(retry)
		}
		o.Limiter.allowHere(refusals)
		return ctx, unauthenticated(ctx, err, credential != "")
	}
	caller, err := a.gate.verify(ctx, o.Verifier, credential, throttled)
	switch {
	case errors.Is(err, ErrInvalid) && throttled:
		return ctx, throttledRefusal(retry)
	case errors.Is(err, ErrInvalid):
		o.Limiter.allowHere(refusals)
		return ctx, unauthenticated(ctx, err, true)
	case err != nil:
		// Not the credential's fault (the database down): answered, and
		// logged, as the error it is.
		if expired, ok := apperr.Expired(ctx); ok {
			err = expired
		}
		return ctx, &Refusal{Err: err}
	}
	// Names are unique within a company only (tokens' subjects).
	key := "caller " + caller.Company.String() + "/" + caller.Name
	if refusal := o.limited(key, caller.Name); refusal != nil {
		return ctx, refusal
	}
	if named, ok := otherCompany(r, header, caller.Company); ok {
		return ctx, &Refusal{Logged: true, caller: caller.Name, Err: &apperr.Error{Code: apperr.Forbidden, Field: tenant.Header,
			Message: fmt.Sprintf("names company %s, but your credential is company %s's", named, caller.Company)}}
	}
	return withRateKey(tenant.WithCredential(ctx, caller.Company, caller.Name, caller.MayWrite), key), nil
}

// AllowOperation charges one more operation to the rate of the caller ctx
// was authenticated as: each operation a WebSocket carries counts as a
// request over HTTP does.
func (a *Authenticator) AllowOperation(ctx context.Context) *Refusal {
	key, _ := ctx.Value(rateKeyCtx{}).(string)
	if key == "" {
		return nil
	}
	return a.o.limited(key, tenant.CallerName(ctx))
}

// Middleware authenticates each request that is not open (Authenticate),
// and answers a refusal in the shape of what it asked for.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// CORS preflights are answered before this (server.crossOrigin).
		if a.o.Open(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, refusal := a.Authenticate(r.Context(), r, r.Header)
		if refusal != nil {
			a.Refuse(w, r, refusal)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Refuse answers refusal, logged unless it is a throttled address's.
func (a *Authenticator) Refuse(w http.ResponseWriter, r *http.Request, refusal *Refusal) {
	if refusal.Challenge != "" {
		w.Header().Set("WWW-Authenticate", refusal.Challenge)
	}
	if refusal.Logged {
		code, reason := apperr.CodeOf(refusal.Err), refusal.Err.Error()
		if e, ok := errors.AsType[*apperr.Error](refusal.Err); ok {
			reason = e.Message
		}
		a.o.Log.InfoContext(r.Context(), "auth: refused", "code", code, "reason", reason, "caller", refusal.caller,
			"remote_addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	}
	a.o.WriteError(w, r, refusal.Err)
}

type rateKeyCtx struct{}

// withRateKey records the key of the caller's rate, for AllowOperation.
func withRateKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, rateKeyCtx{}, key)
}

// throttledRefusal refuses a throttled address's bad credential: unlogged.
func throttledRefusal(retry time.Duration) *Refusal {
	return &Refusal{Err: &apperr.Error{Code: apperr.RateLimited, RetryAfter: wholeSeconds(retry),
		Message: "too many requests without a valid credential: retry after the Retry-After seconds"}}
}

// limited refuses key when it has run out of its rate.
func (o Options) limited(key, caller string) *Refusal {
	retry, ok := o.Limiter.Allow(key)
	if ok {
		return nil
	}
	return &Refusal{Logged: true, caller: caller, Err: &apperr.Error{Code: apperr.RateLimited, RetryAfter: wholeSeconds(retry),
		Message: "too many requests: retry after the Retry-After seconds"}}
}

// wholeSeconds rounds retry up to a whole second, at least one: what
// Retry-After can say.
func wholeSeconds(retry time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(retry.Seconds()))*time.Second, time.Second)
}

// unauthenticated refuses a request without a valid credential; without
// one at all, it says where to send one: over a WebSocket, where a browser
// cannot set headers, in the connection_init payload.
func unauthenticated(ctx context.Context, err error, given bool) *Refusal {
	challenge := `Bearer realm="inventory"`
	if given {
		challenge += `, error="invalid_token"`
	}
	message := "send your credential as Authorization: Bearer <key or token> (or X-Api-Key: <key>)"
	switch {
	case given:
		message = err.Error()
	case tenant.OverWebSocket(ctx):
		message = `send your credential in the connection_init payload: {"Authorization": "Bearer <key or token>"}`
	}
	return &Refusal{Challenge: challenge, Logged: true, Err: &apperr.Error{Code: apperr.Unauthenticated, Message: message}}
}

// credentialOf reads the credential from Authorization: Bearer or X-Api-Key;
// sending two that differ is an error.
func credentialOf(header http.Header) (string, error) {
	var given []string
	for _, v := range header.Values("Authorization") {
		parts := strings.Fields(v)
		if len(parts) != 2 || !strings.EqualFold(parts[0], "Bearer") {
			return v, invalid("the Authorization header must be Bearer <key or token>")
		}
		given = append(given, parts[1])
	}
	for _, v := range header.Values("X-Api-Key") {
		given = append(given, strings.TrimSpace(v))
	}
	switch {
	case len(given) == 0:
		return "", invalid("no credential")
	case len(given) > 1:
		for _, g := range given[1:] {
			if g != given[0] {
				return given[0], invalid("more than one credential, and they differ")
			}
		}
	}
	return given[0], nil
}

// otherCompany reports whether the request names (tenant.Named: in
// header, or r's query) a company that is not own, or a value that is no
// company at all: it is not the caller's.
func otherCompany(r *http.Request, header http.Header, own uuid.UUID) (string, bool) {
	id, present, err := tenant.Named(header, r.URL.Query(), tenant.Header)
	switch {
	case !present:
		return "", false
	case err != nil:
		return "a value that is not one company's UUID", true
	}
	return id.String(), id != own
}

// clientAddress is the connection's address without its port: a proxy's,
// behind one (X-Forwarded-For is the client's to write, so never trusted).
// An IPv6 address counts by its /64, which one client usually holds whole.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return host
}
