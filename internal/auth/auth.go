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

// Middleware authenticates each request that is not open, rate-limits it,
// and scopes it to the caller's company.
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
func Middleware(o Options, next http.Handler) http.Handler {
	g := newGate()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Header mode asks for no credential: at most a rate per address.
		if o.Mode == Header {
			if o.Limiter != nil && !o.Open(r) && o.limited(w, r, "address "+clientAddress(r), "") {
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		// CORS preflights are answered before this (server.crossOrigin).
		if o.Open(r) {
			next.ServeHTTP(w, r)
			return
		}
		refusals := "refused " + clientAddress(r)
		retry, throttled := o.Limiter.Exhausted(refusals)
		credential, err := credentialOf(r)
		if err != nil {
			// No credential, or a malformed header: nothing here can be valid.
			if throttled {
				o.throttled(w, r, retry)
				return
			}
			o.Limiter.Allow(refusals)
			o.unauthenticated(w, r, err, credential != "")
			return
		}
		caller, err := g.verify(r.Context(), o.Verifier, credential, throttled)
		switch {
		case errors.Is(err, ErrInvalid) && throttled:
			o.throttled(w, r, retry)
			return
		case errors.Is(err, ErrInvalid):
			o.Limiter.Allow(refusals)
			o.unauthenticated(w, r, err, true)
			return
		case err != nil:
			if expired, ok := apperr.Expired(r.Context()); ok {
				err = expired
			}
			o.WriteError(w, r, err)
			return
		}
		// Names are unique within a company only (tokens' subjects).
		if o.limited(w, r, "caller "+caller.Company.String()+"/"+caller.Name, caller.Name) {
			return
		}
		if named, ok := otherCompany(r, caller.Company); ok {
			o.refuse(w, r, caller.Name, &apperr.Error{Code: apperr.Forbidden, Field: tenant.Header,
				Message: fmt.Sprintf("names company %s, but your credential is company %s's", named, caller.Company)})
			return
		}
		next.ServeHTTP(w, r.WithContext(tenant.WithCredential(r.Context(), caller.Company, caller.Name, caller.MayWrite)))
	})
}

// throttled refuses a throttled address's bad credential: unlogged, since
// logging each would let it fill the logs at its own pace.
func (o Options) throttled(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	tooMany(w, retry)
	o.WriteError(w, r, apperr.Errorf(apperr.RateLimited, "too many requests without a valid credential: retry after the Retry-After seconds"))
}

// limited answers 429 when key has run out of its rate.
func (o Options) limited(w http.ResponseWriter, r *http.Request, key, caller string) bool {
	retry, ok := o.Limiter.Allow(key)
	if ok {
		return false
	}
	tooMany(w, retry)
	o.refuse(w, r, caller, apperr.Errorf(apperr.RateLimited, "too many requests: retry after the Retry-After seconds"))
	return true
}

// tooMany says when to come back, in whole seconds.
func tooMany(w http.ResponseWriter, retry time.Duration) {
	w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(retry.Seconds()))))
}

func (o Options) unauthenticated(w http.ResponseWriter, r *http.Request, err error, given bool) {
	challenge := `Bearer realm="inventory"`
	if given {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	message := "send your credential as Authorization: Bearer <key or token> (or X-Api-Key: <key>)"
	if given {
		message = err.Error()
	}
	o.refuse(w, r, "", &apperr.Error{Code: apperr.Unauthenticated, Message: message})
}

// refuse logs a refusal with whom and what it refused, and answers it.
func (o Options) refuse(w http.ResponseWriter, r *http.Request, caller string, err *apperr.Error) {
	o.Log.InfoContext(r.Context(), "auth: refused", "code", err.Code, "reason", err.Message, "caller", caller,
		"remote_addr", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	o.WriteError(w, r, err)
}

// credentialOf reads the credential from Authorization: Bearer or X-Api-Key;
// sending two that differ is an error.
func credentialOf(r *http.Request) (string, error) {
	var given []string
	for _, v := range r.Header.Values("Authorization") {
		parts := strings.Fields(v)
		if len(parts) != 2 || !strings.EqualFold(parts[0], "Bearer") {
			return v, invalid("the Authorization header must be Bearer <key or token>")
		}
		given = append(given, parts[1])
	}
	for _, v := range r.Header.Values("X-Api-Key") {
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

// otherCompany returns the first company the request names, in the header
// or the query (x-company-id, any case), that is not the caller's. A value
// that is not a UUID counts as another company: it is not the caller's.
func otherCompany(r *http.Request, own uuid.UUID) (string, bool) {
	named := r.Header.Values(tenant.Header)
	for key, values := range r.URL.Query() {
		if strings.EqualFold(key, tenant.Header) {
			named = append(named, values...)
		}
	}
	for _, v := range named {
		if id, err := uuid.Parse(strings.TrimSpace(v)); err != nil || id != own {
			return fmt.Sprintf("%.40q", v), true
		}
	}
	return "", false
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
