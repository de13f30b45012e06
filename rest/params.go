package rest

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/paging"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// companyParam is the legacy name of the company parameter; it is accepted
// in the query (as the spec lists it) and as the X-Company-Id header.
const companyParam = "x-company-id"

// params reads the query and path parameters of one request; the first
// problem found is kept and reported, naming the parameter.
type params struct {
	r   *http.Request
	q   url.Values // the query string, parsed once by parseQuery
	err error
}

func (p *params) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = apperr.InvalidField(name, format, args...)
	}
}

func (p *params) query(name string) (string, bool) {
	values, ok := p.q[name]
	if !ok || len(values) == 0 {
		return "", false
	}
	return strings.TrimSpace(values[0]), true
}

// parseQuery parses a raw query string like url.ParseQuery, but a pair it
// cannot read is an error naming that pair's parameter, never skipped.
// URL.Query() drops such pairs silently: "x-company-id=<uuid>;" (';' is no
// longer a separator) or "x-company-id=%zz" read as no company at all, and
// A1, A2, A3 and A5 then served the record to anyone by its UUID alone,
// unscoped: the parameter meant to restrict the lookup lifted the
// restriction. A request whose query cannot be read fails instead.
func parseQuery(raw string) (url.Values, error) {
	if raw == "" {
		return nil, nil
	}
	q := make(url.Values, strings.Count(raw, "&")+1)
	for at := 0; at <= len(raw); {
		pair, _, _ := strings.Cut(raw[at:], "&")
		offset := at + 1 // where the pair starts, counting from 1, for the message
		at += len(pair) + 1
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || strings.Contains(rawKey, ";") {
			// The key itself is unreadable ("a;b=1" may mean a and b): say where.
			return nil, &apperr.Error{Code: apperr.Invalid, Message: fmt.Sprintf(
				"the query string is malformed at byte %d: %s", offset, malformed(pair))}
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil || strings.Contains(rawValue, ";") {
			return nil, apperr.InvalidField(shortened(key), "is malformed at byte %d of the query string: %s", offset, malformed(pair))
		}
		q[key] = append(q[key], value)
	}
	return q, nil
}

// malformed says what is wrong with a pair of the query string.
func malformed(pair string) string {
	if strings.Contains(pair, ";") {
		return fmt.Sprintf("%s holds a ';', which does not separate parameters: join them with '&', or send a ';' as %%3B", apperr.Quote(pair))
	}
	return fmt.Sprintf("%s is not valid percent-encoding: '%%' must be followed by two hex digits (send a '%%' as %%25)", apperr.Quote(pair))
}

// shortened keeps what an error message echoes of client input short.
func shortened(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	// Cut at a character's start, never inside one: a message quoting
	// half a character would carry an invalid byte.
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// asParameter names the REST parameter behind a GraphQL argument path that
// the executor refused: the filters REST passes as the operation's where
// variable are named as the fields they fill (city is where.city).
func asParameter(e *apperr.Error) *apperr.Error {
	if !strings.HasPrefix(e.Field, "where.") {
		return e
	}
	named := *e
	named.Field = strings.TrimPrefix(e.Field, "where.")
	return &named
}

// uuid reads a required UUID from the path or, failing that, the query.
func (p *params) uuid(name string) uuid.UUID {
	value := p.r.PathValue(name)
	if value == "" {
		value, _ = p.query(name)
	}
	if value == "" {
		p.fail(name, "is required: a UUID")
		return uuid.Nil
	}
	id, err := parseUUID(value)
	if err != nil {
		p.fail(name, "%s is not a UUID", apperr.Quote(value))
	}
	return id
}

// parseUUID reads a UUID in its canonical form only (8-4-4-4-12 hex digits),
// the form the contract gives out: uuid.Parse would also take braces, a
// urn:uuid: prefix or no dashes, which no legacy client sends.
func parseUUID(value string) (uuid.UUID, error) {
	if len(value) != 36 {
		return uuid.Nil, errors.New("not a canonical UUID")
	}
	return uuid.Parse(value)
}

// company reads the required company id from the query or the header; when
// both are sent they must agree.
func (p *params) company() uuid.UUID {
	id, present := p.companyGiven()
	if !present {
		p.fail(companyParam, "is required: the UUID of your company, as a query parameter or the X-Company-Id header")
	}
	return id
}

// optionalCompany is company for endpoints where the spec names none: absent
// is fine, and the lookup is then by id alone (audited).
func (p *params) optionalCompany() (uuid.UUID, bool) {
	id, present := p.companyGiven()
	if !present {
		return uuid.Nil, false
	}
	return id, true
}

// companyGiven reads the company from every place a client may name it: the
// query parameter (its key in any case: X-Company-Id=… in the query means
// the company too) and the X-Company-Id header, each as often as sent.
// Present is decided by the names alone, never by the values: where a
// company is optional, reading "x-company-id=" or "x-company-id=&x-company-
// id=B" as "no company" would lift the scoping the client asked for (fail
// open). So once named, every value must be the same canonical UUID; any
// other is an error, and the request fails closed.
func (p *params) companyGiven() (id uuid.UUID, present bool) {
	id, present, err := tenant.Named(p.r.Header, p.q, companyParam)
	switch {
	case err != nil:
		if p.err == nil {
			p.err = err
		}
		return uuid.Nil, true
	case !present:
		// A credential names the company (internal/auth has checked that
		// any company given agrees with it).
		return tenant.Bound(p.r.Context())
	}
	return id, true
}

// int reads an integer in [lo, hi]; absent gives def, and required makes
// absence an error.
func (p *params) int(name string, def, lo, hi int, required bool) int {
	value, ok := p.query(name)
	if !ok || value == "" {
		if required {
			p.fail(name, "is required: a whole number from %d", lo)
		}
		return def
	}
	n, err := strconv.Atoi(value)
	switch {
	case err != nil:
		p.fail(name, "%s is not a whole number", apperr.Quote(value))
	case n < lo || n > hi:
		p.fail(name, "must be from %d to %d, got %d", lo, hi, n)
	}
	return n
}

// pageSize reads the page size of group B's lists: at least 1, default
// paging.DefaultPageSize, and above paging.MaxPageSize the maximum (the spec
// gives none, and rule 1 has the answer tell the size it used).
func (p *params) pageSize() int {
	return min(p.int("pageSize", paging.DefaultPageSize, 1, math.MaxInt32, false), paging.MaxPageSize)
}

// nullableInt is int for filters whose default is null (no filter): absent,
// empty or "null" give nil.
func (p *params) nullableInt(name string, lo, hi int) *int {
	value, ok := p.query(name)
	if !ok || value == "" || strings.EqualFold(value, "null") {
		return nil
	}
	n := p.int(name, 0, lo, hi, false)
	return &n
}

// nullableBool reads true or false; absent, empty or "null" give nil.
func (p *params) nullableBool(name string) *bool {
	value, ok := p.query(name)
	if !ok || value == "" || strings.EqualFold(value, "null") {
		return nil
	}
	// In any case: .NET writes True and False.
	var b bool
	switch {
	case strings.EqualFold(value, "true"):
		b = true
	case strings.EqualFold(value, "false"):
	default:
		p.fail(name, "%s is not true, false or null", apperr.Quote(value))
		return nil
	}
	return &b
}

// oneOf reads one of choices (matched without regard to case) and returns the
// matching choice; absent gives def.
func (p *params) oneOf(name, def string, required bool, choices ...string) string {
	value, ok := p.query(name)
	if !ok || value == "" {
		if required {
			p.fail(name, "is required: one of %s", strings.Join(choices, ", "))
		}
		return def
	}
	for _, c := range choices {
		if strings.EqualFold(value, c) {
			return c
		}
	}
	p.fail(name, "%s is not one of %s", apperr.Quote(value), strings.Join(choices, ", "))
	return def
}
