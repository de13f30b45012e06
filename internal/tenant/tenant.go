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

// FromHeader scopes ctx to the company named by a raw header value. A
// malformed value is kept as an error and reported when data is first read, so
// that schema introspection still works without the header.
func FromHeader(ctx context.Context, value string) context.Context {
	if value == "" {
		return ctx
	}
	id, err := uuid.Parse(value)
	if err != nil {
		return context.WithValue(ctx, ctxKey{}, company{err: apperr.InvalidField(Header, "%q is not a UUID", value)})
	}
	return WithCompany(ctx, id)
}

// CompanyFrom returns the company ctx is scoped to.
func CompanyFrom(ctx context.Context) (uuid.UUID, error) {
	c, ok := ctx.Value(ctxKey{}).(company)
	switch {
	case !ok:
		return uuid.Nil, &apperr.Error{Code: apperr.Unauthenticated, Field: Header,
			Message: "missing: send the UUID of your company in the X-Company-Id header"}
	case c.err != nil:
		return uuid.Nil, c.err
	}
	return c.id, nil
}

// Unrestricted is the one audited way to act across companies or to write:
// loading demo data, importing, and the legacy lookups by UUID that the spec
// gives no company (A1, A2, A3, A5). Every caller gives the reason, which is
// logged at info level so that the audit trail survives the default level.
func Unrestricted(ctx context.Context, reason string) context.Context {
	slog.InfoContext(ctx, "tenancy: unrestricted context", "reason", reason)
	return entprivacy.DecisionContext(ctx, entprivacy.Allow)
}

// Authorize reports whether ctx may read records at all: it names a company,
// or it is Unrestricted. Reads that bypass ent's policy (the node locator)
// ask it first, so that a caller without a company learns nothing, not even
// whether an id exists.
func Authorize(ctx context.Context) error {
	// ent reports a stored Allow decision as (nil, true).
	if decision, ok := entprivacy.DecisionFromContext(ctx); ok && decision == nil {
		return nil
	}
	_, err := CompanyFrom(ctx)
	return err
}

// Policy is the privacy policy of every company-owned schema: reads are
// filtered to the caller's company; writes are refused outside Unrestricted
// (the service is read-only to clients).
func Policy() entprivacy.Policy {
	return entprivacy.Policy{
		Query:    entprivacy.QueryPolicy{filterByCompany},
		Mutation: entprivacy.MutationPolicy{entprivacy.AlwaysDenyRule()},
	}
}

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
