package rest

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// companyParam is the legacy name of the company parameter; it is accepted
// in the query (as the spec lists it) and as the X-Company-Id header.
const companyParam = "x-company-id"

// params reads the query and path parameters of one request; the first
// problem found is kept and reported, naming the parameter.
type params struct {
	r   *http.Request
	err error
}

func (p *params) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = apperr.InvalidField(name, format, args...)
	}
}

func (p *params) query(name string) (string, bool) {
	values, ok := p.r.URL.Query()[name]
	if !ok || len(values) == 0 {
		return "", false
	}
	return strings.TrimSpace(values[0]), true
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
		p.fail(name, "%q is not a UUID", value)
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
	inQuery, _ := p.query(companyParam)
	inHeader := strings.TrimSpace(p.r.Header.Get(tenant.Header))
	switch {
	case inQuery == "" && inHeader == "":
		p.fail(companyParam, "is required: the UUID of your company, as a query parameter or the X-Company-Id header")
		return uuid.Nil
	case inQuery != "" && inHeader != "" && !strings.EqualFold(inQuery, inHeader):
		p.fail(companyParam, "the query parameter and the X-Company-Id header name different companies")
		return uuid.Nil
	case inQuery == "":
		inQuery = inHeader
	}
	id, err := parseUUID(inQuery)
	if err != nil {
		p.fail(companyParam, "%q is not a UUID", inQuery)
	}
	return id
}

// optionalCompany is company for endpoints where the spec names none: absent
// is fine.
func (p *params) optionalCompany() (uuid.UUID, bool) {
	inQuery, _ := p.query(companyParam)
	if inQuery == "" && strings.TrimSpace(p.r.Header.Get(tenant.Header)) == "" {
		return uuid.Nil, false
	}
	return p.company(), true
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
		p.fail(name, "%q is not a whole number", value)
	case n < lo || n > hi:
		p.fail(name, "must be from %d to %d, got %d", lo, hi, n)
	}
	return n
}

// nullableInt is int for filters whose default is null (no filter): absent,
// empty or "null" give nil.
func (p *params) nullableInt(name string, lo, hi int) *int {
	value, ok := p.query(name)
	if !ok || value == "" || value == "null" {
		return nil
	}
	n := p.int(name, 0, lo, hi, false)
	return &n
}

// nullableBool reads true or false; absent, empty or "null" give nil.
func (p *params) nullableBool(name string) *bool {
	value, ok := p.query(name)
	if !ok || value == "" || value == "null" {
		return nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil || (value != "true" && value != "false") {
		p.fail(name, "%q is not true, false or null", value)
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
	p.fail(name, "%q is not one of %s", value, strings.Join(choices, ", "))
	return def
}
