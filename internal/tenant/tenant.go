// Package tenant keeps one company's records away from every other company.
//
// The company travels in the request context. The privacy policy below is
// attached to every company-owned ent schema (through schema.CompanyMixin), so
// every query, count, edge load and node lookup is filtered by company_id in
// SQL, whatever GraphQL field or REST endpoint asked for it.
package tenant

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	entgen "entgo.io/ent"
	"entgo.io/ent/entql"
	entprivacy "entgo.io/ent/privacy"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/privacy"
	"github.com/propertyrecords/inventory/internal/apperr"
)

// Header is the HTTP header (and, for the legacy REST contract, the query
// parameter) that names the caller's company.
const Header = "X-Company-Id"

type ctxKey struct{}

type company struct {
	id  uuid.UUID
	err error
}

// WithCompany scopes ctx to one company.
func WithCompany(ctx context.Context, id uuid.UUID) context.Context {
	return context.WithValue(ctx, ctxKey{}, company{id: id})
}

// FromRequest scopes ctx to the company a request names (Named: its
// X-Company-Id headers, given as header, and the x-company-id parameter of
// its URL's rawQuery), as sent: /graphql's, whatever its transport. A
// malformed value is kept as an error and reported when data is first
// read, so that schema introspection still works without a company; so is
// a query string that does not parse, whose dropped pair may be the
// company (fail closed).
func FromRequest(ctx context.Context, header http.Header, rawQuery string) context.Context {
	query, perr := url.ParseQuery(rawQuery)
	if perr != nil {
		return context.WithValue(ctx, ctxKey{}, company{err: apperr.InvalidField(Header,
			"the URL's query string does not parse, so the company it may name cannot be read: %s", apperr.Quote(perr.Error()))})
	}
	id, present, err := Named(header, query, Header)
	switch {
	case err != nil:
		return context.WithValue(ctx, ctxKey{}, company{err: err})
	case present:
		return WithCompany(ctx, id)
	}
	return ctx
}

// Named reads the company a request names: every value of its X-Company-Id
// header and, when query is given, of its x-company-id parameter in any
// case. It is the one reader of them: GraphQL's scoping, REST's parameters
// and the check that a credential's company is the one named all read here,
// and refuse alike (INVALID_ARGUMENT on field, the interface's name for
// it). present is decided by the names alone, never by the values: reading
// "x-company-id=" as "no company" would lift the scoping a client asked for
// where a company is optional (fail open). So once named, every value must
// be the same canonical UUID: behind a gateway that appends its header
// rather than replacing the client's, values that disagree are a client's
// own choice among them.
func Named(header http.Header, query url.Values, field string) (id uuid.UUID, present bool, err *apperr.Error) {
	given := header.Values(Header)
	for key, values := range query {
		if strings.EqualFold(key, Header) {
			given = append(given, values...)
		}
	}
	for _, value := range given {
		value = strings.TrimSpace(value)
		this, perr := uuid.Parse(value)
		switch {
		case value == "":
			return uuid.Nil, true, apperr.InvalidField(field, "is empty: give the UUID of your company, or leave it out")
		case perr != nil || len(value) != 36:
			return uuid.Nil, true, apperr.InvalidField(field, "%s is not a UUID", apperr.Quote(value))
		case id != uuid.Nil && this != id:
			return uuid.Nil, true, apperr.InvalidField(field, "names different companies (in the query and the X-Company-Id header, or more than once)")
		}
		id = this
	}
	return id, len(given) > 0, nil
}

type boundKey struct{}

// WithCredential scopes ctx to the company a verified credential names
// (internal/auth): unlike a header, it binds the request to that company,
// which Bound tells, and names the caller in the audit lines.
func WithCredential(ctx context.Context, id uuid.UUID, caller string, mayWrite bool) context.Context {
	ctx = context.WithValue(WithCompany(ctx, id), boundKey{}, binding{id, mayWrite})
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok {
		named := *c
		named.Name = caller
		ctx = context.WithValue(ctx, callerKey{}, &named)
	}
	return ctx
}

// Bound returns the company a credential bound ctx to, if any: the request
// may read that company's records and nothing else, and a lookup that would
// otherwise go without a company is scoped to it.
func Bound(ctx context.Context) (uuid.UUID, bool) {
	b, ok := ctx.Value(boundKey{}).(binding)
	return b.company, ok
}

// binding is what a verified credential says: its company, and whether its
// scope includes writing.
type binding struct {
	company  uuid.UUID
	mayWrite bool
}

// CompanyFrom returns the company ctx is scoped to.
func CompanyFrom(ctx context.Context) (uuid.UUID, error) {
	c, ok := ctx.Value(ctxKey{}).(company)
	switch {
	case !ok && OverWebSocket(ctx):
		return uuid.Nil, &apperr.Error{Code: apperr.Unauthenticated, Field: Header,
			Message: `missing: send your company's UUID in the connection_init payload: {"X-Company-Id": "<uuid>"}`}
	case !ok:
		return uuid.Nil, &apperr.Error{Code: apperr.Unauthenticated, Field: Header,
			Message: "missing: send the UUID of your company in the X-Company-Id header"}
	case c.err != nil:
		return uuid.Nil, c.err
	}
	return c.id, nil
}

type webSocketKey struct{}

// WithWebSocket marks ctx as a WebSocket connection's, whose credential and
// company come in its connection_init payload, header names as keys
// ({"X-Company-Id": …}): a browser cannot set a WebSocket's headers, so the
// refusals that ask for them name the payload instead (CompanyFrom, and
// internal/auth's for a missing credential).
func WithWebSocket(ctx context.Context) context.Context {
	return context.WithValue(ctx, webSocketKey{}, true)
}

// OverWebSocket reports whether ctx is a WebSocket connection's (WithWebSocket).
func OverWebSocket(ctx context.Context) bool {
	ws, _ := ctx.Value(webSocketKey{}).(bool)
	return ws
}

// AuditMessage is the message of Unrestricted's audit lines.
const AuditMessage = "tenancy: unrestricted context"

// AuditLog is h with the audit lines as mode (INVENTORY_AUDIT_LOG) says:
// "info" as they are written, "debug" at debug level (kept only where h
// keeps debug), "off" dropped. The setting belongs to the logger a program
// builds from its configuration, not to this package: the lines are
// written at info to the default logger, whatever it is.
func AuditLog(h slog.Handler, mode string) slog.Handler {
	if mode != "debug" && mode != "off" {
		return h
	}
	return auditHandler{Handler: h, off: mode == "off"}
}

type auditHandler struct {
	slog.Handler
	off bool // else debug
}

func (h auditHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == AuditMessage {
		if h.off || !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h auditHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return auditHandler{Handler: h.Handler.WithAttrs(attrs), off: h.off}
}

func (h auditHandler) WithGroup(name string) slog.Handler {
	return auditHandler{Handler: h.Handler.WithGroup(name), off: h.off}
}

// Unrestricted is the one audited way to act across companies or to write:
// loading demo data, importing, and the legacy lookups by UUID that the spec
// gives no company (A1, A2, A3, A5; see UnrestrictedRecord). Every caller
// gives the reason, which is logged at info level so that the audit trail
// survives the default level; within a request the line also names the
// caller (WithCaller).
func Unrestricted(ctx context.Context, reason string) context.Context {
	audit(ctx, reason, uuid.Nil)
	return entprivacy.DecisionContext(ctx, entprivacy.Allow)
}

// UnrestrictedRecord is Unrestricted for a lookup of one record by its id,
// which the audit line names: "someone read something without a company"
// says nothing that an audit can follow up; which record, and who asked, does.
func UnrestrictedRecord(ctx context.Context, reason string, record uuid.UUID) context.Context {
	audit(ctx, reason, record)
	return entprivacy.DecisionContext(ctx, entprivacy.Allow)
}

// audit writes the audit line of an unrestricted context to the default
// logger, at info: the logger's handler sets its level (AuditLog).
func audit(ctx context.Context, reason string, record uuid.UUID) {
	log := slog.Default()
	// Checked first so that lines not written cost nothing to build.
	if !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.String("reason", reason))
	if record != uuid.Nil {
		attrs = append(attrs, slog.String("record", record.String()))
	}
	attrs = CallerAttrs(ctx, attrs)
	log.LogAttrs(ctx, slog.LevelInfo, AuditMessage, attrs...)
}

// CallerAttrs appends to attrs who sent the request of ctx, for an audit
// line: the caller its credential names, its address, and X-Forwarded-For
// as sent. Outside a request it appends nothing.
func CallerAttrs(ctx context.Context, attrs []slog.Attr) []slog.Attr {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok {
		if c.Name != "" {
			attrs = append(attrs, slog.String("caller", c.Name))
		}
		attrs = append(attrs, slog.String("remote_addr", c.RemoteAddr))
		if c.ForwardedFor != "" {
			attrs = append(attrs, slog.String("x_forwarded_for", c.ForwardedFor))
		}
	}
	return attrs
}

// CallerName is the name the request's credential gives its caller (an API
// key's name, a token's subject): empty in header mode and outside a request.
func CallerName(ctx context.Context) string {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok {
		return c.Name
	}
	return ""
}

// Caller is who sent the request being served, for the audit lines.
type Caller struct {
	// Name is the caller its credential names (an API key's name, a token's
	// subject); empty in header mode.
	Name string
	// RemoteAddr is the address the connection came from (http.Request's
	// RemoteAddr): a proxy's, behind one.
	RemoteAddr string
	// ForwardedFor is the X-Forwarded-For header, if any, as sent: the
	// addresses a proxy says it forwarded for, or whatever a client wrote
	// there itself. Logged as that header, never as the caller's address.
	ForwardedFor string
}

type callerKey struct{}

// maxForwardedFor bounds the X-Forwarded-For kept for the audit lines: a
// client may send a header of any length, and each audited lookup would
// write it to the log.
const maxForwardedFor = 256

// WithCaller records in ctx who sent the request, for the audit lines of
// the unrestricted contexts made within it.
func WithCaller(ctx context.Context, remoteAddr, forwardedFor string) context.Context {
	if len(forwardedFor) > maxForwardedFor {
		forwardedFor = forwardedFor[:maxForwardedFor] + "…(truncated)"
	}
	return context.WithValue(ctx, callerKey{}, &Caller{RemoteAddr: remoteAddr, ForwardedFor: forwardedFor})
}

// IsUnrestricted reports whether ctx is Unrestricted.
func IsUnrestricted(ctx context.Context) bool {
	// ent reports a stored Allow decision as (nil, true).
	decision, ok := entprivacy.DecisionFromContext(ctx)
	return ok && decision == nil
}

// Authorize reports whether ctx may read records at all: it names a company,
// or it is Unrestricted. Reads that bypass ent's policy (the node locator)
// ask it first, so that a caller without a company learns nothing, not even
// whether an id exists.
func Authorize(ctx context.Context) error {
	if IsUnrestricted(ctx) {
		return nil
	}
	_, err := CompanyFrom(ctx)
	return err
}

// Policy is the privacy policy of every company-owned schema: reads are
// filtered to the caller's company; writes are refused, except within
// Unrestricted and as the caller's company within ForWriting.
func Policy() entprivacy.Policy {
	return entprivacy.Policy{
		Query:    entprivacy.QueryPolicy{filterByCompany},
		Mutation: entprivacy.MutationPolicy{writeAsCompany, entprivacy.AlwaysDenyRule()},
	}
}

// OwnRowPolicy is the privacy policy of a company's own row (ent/schema
// Company), whose id is the company: reads see the caller's row only, and
// writes are refused except within Unrestricted (the operator's commands,
// the import).
func OwnRowPolicy() entprivacy.Policy {
	return entprivacy.Policy{
		Query:    entprivacy.QueryPolicy{filterByOwnID},
		Mutation: entprivacy.MutationPolicy{entprivacy.AlwaysDenyRule()},
	}
}

// idFilter is implemented by the entql filter of every schema.
type idFilter interface {
	WhereID(entql.ValueP)
}

var filterByOwnID = privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
	id, err := CompanyFrom(ctx)
	if err != nil {
		return err
	}
	idf, ok := f.(idFilter)
	if !ok {
		return entprivacy.Denyf("tenant: %T has no id to filter on", f)
	}
	idf.WhereID(entql.ValueEQ(id))
	return entprivacy.Skip
})

type writeKey struct{}

// ForWriting returns ctx allowed to write its company's records: a create
// must be of that company, and an update or a delete touches that company's
// rows only. internal/records, through which the API writes, is its one
// caller, so no other code writes for a client by accident.
//
// A request bound to a credential (apikey and jwt modes) writes only if the
// credential's scope says so; in header mode the gateway answers for its
// callers. Whether the service takes writes at all is the caller's
// (internal/records, INVENTORY_WRITES).
func ForWriting(ctx context.Context) (context.Context, error) {
	id, err := CompanyFrom(ctx)
	if err != nil {
		return ctx, err
	}
	if b, bound := ctx.Value(boundKey{}).(binding); bound && !b.mayWrite {
		return ctx, apperr.Errorf(apperr.Forbidden, "this credential may read only: writing takes an API key made with --scope write, or a token whose scope claim says write")
	}
	return context.WithValue(ctx, writeKey{}, id), nil
}

// writeAsCompany allows the writes of ForWriting.
var writeAsCompany = privacy.MutationRuleFunc(func(ctx context.Context, m entgen.Mutation) error {
	id, ok := ctx.Value(writeKey{}).(uuid.UUID)
	if !ok {
		return entprivacy.Skip
	}
	if m.Op().Is(entgen.OpCreate) {
		if v, _ := m.Field("company_id"); v == id {
			return entprivacy.Allow
		}
		return entprivacy.Denyf("tenant: a %s of another company than the caller's", m.Type())
	}
	return privacy.FilterFunc(func(_ context.Context, f privacy.Filter) error {
		cf, ok := f.(companyFilter)
		if !ok {
			return entprivacy.Denyf("tenant: %T has no company_id to filter on", f)
		}
		cf.WhereCompanyID(entql.ValueEQ(id))
		return entprivacy.Allow
	}).EvalMutation(ctx, m)
})

// companyFilter is implemented by the entql filter of every schema that mixes
// in CompanyMixin.
type companyFilter interface {
	WhereCompanyID(entql.ValueP)
}

var filterByCompany = privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
	id, err := CompanyFrom(ctx)
	if err != nil {
		return err
	}
	cf, ok := f.(companyFilter)
	if !ok {
		return entprivacy.Denyf("tenant: %T has no company_id to filter on", f)
	}
	cf.WhereCompanyID(entql.ValueEQ(id))
	return entprivacy.Skip
})
