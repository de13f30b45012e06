// Package scalar encodes the GraphQL scalars whose wire form is a contract:
// timestamps are UTC RFC 3339 and money is exact decimal text.
package scalar

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/shopspring/decimal"
)

// MarshalTime writes t in UTC, RFC 3339, with fractional seconds only when present.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(FormatTime(t)))
	})
}

// FormatTime is the one text form of a timestamp in every interface.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// UnmarshalTime reads an RFC 3339 timestamp and converts it to UTC, because
// stored timestamps are UTC and SQLite compares them as text.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("time must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is not RFC 3339 (e.g. 2024-05-01T12:00:00Z)", s)
	}
	return t.UTC(), nil
}

// MarshalDecimal writes money as a JSON string with two decimals, so no client
// parses it into a float on the way.
func MarshalDecimal(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(d.StringFixed(2)))
	})
}

// UnmarshalDecimal reads decimal text; JSON numbers are refused because they
// may already have been rounded through a float by the client.
func UnmarshalDecimal(v any) (decimal.Decimal, error) {
	s, ok := v.(string)
	if !ok {
		return decimal.Decimal{}, errors.New("decimal must be a string such as \"1500000.00\"")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%q is not a decimal number", s)
	}
	return d, nil
}
