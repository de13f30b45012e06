// Package scalar encodes the GraphQL scalars whose wire form is a contract:
// timestamps are UTC RFC 3339 and money is exact decimal text.
package scalar

import (
	"encoding/base64"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Every Unmarshal here reports bad input as an *apperr.Error: the GraphQL
// error presenter shows a client only errors of that kind.

// MarshalTime writes t in UTC, RFC 3339, with fractional seconds only when present.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(AppendTime(nil, t))
	})
}

// AppendTime appends t as MarshalTime writes it, quoted. Years of four
// digits, every stored time, are written digit by digit rather than through
// AppendFormat, which reads its layout again for each time (a page of
// inventories writes two times a row); the text is the same.
func AppendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, TimeLayout)
		return append(dst, '"')
	}
	hour, minute, second := t.Clock()
	dst = append(dst, '"')
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, second, 2)
	dst = append(dst, '.')
	dst = appendDigits(dst, t.Nanosecond()/int(time.Millisecond), 3)
	return append(dst, 'Z', '"')
}

// appendDigits appends n (0 <= n < 10^width) in width digits, zeros first.
func appendDigits(dst []byte, n, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		dst = append(dst, 0)
	}
	for i := len(dst) - 1; i >= len(dst)-width; i-- {
		dst[i] = byte('0' + n%10)
		n /= 10
	}
	return dst
}

// TimeLayout is the one text form of a timestamp in every interface: RFC
// 3339 in UTC with milliseconds, always three digits
// (2024-05-01T12:00:00.000Z), whatever wrote the time. Every time is kept
// to the millisecond too (internal/store), so one sent back finds what it
// came from.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime is the one text form of a timestamp in every interface.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// UnmarshalTime reads an RFC 3339 timestamp and converts it to UTC, because
// stored timestamps are UTC and SQLite compares them as text.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, apperr.Errorf(apperr.Invalid, "time must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, apperr.Errorf(apperr.Invalid, "time %s is not RFC 3339 (e.g. 2024-05-01T12:00:00Z)", apperr.Quote(s))
	}
	return t.UTC(), nil
}

// MarshalDecimal writes money as a JSON string with two decimals, so no client
// parses it into a float on the way.
func MarshalDecimal(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(AppendDecimal(nil, d))
	})
}

// AppendDecimal appends d as MarshalDecimal writes it, quoted: with two
// places, as StringFixed(2) writes it. An amount of at most 15 digits (every
// numeric(15,2) the database holds) is written from its hundredths as an
// int64; StringFixed's rounding and text cost six allocations of big
// integers and strings for each amount of a page.
func AppendDecimal(dst []byte, d decimal.Decimal) []byte {
	dst = append(dst, '"')
	if cents, ok := hundredths(d); ok {
		if cents < 0 {
			dst = append(dst, '-')
			cents = -cents
		}
		dst = strconv.AppendInt(dst, cents/100, 10)
		dst = append(dst, '.', byte('0'+cents%100/10), byte('0'+cents%10))
	} else {
		dst = append(dst, d.StringFixed(2)...)
	}
	return append(dst, '"')
}

// hundredths is d in hundredths, rounded half away from zero as StringFixed
// rounds, when its coefficient has at most 15 digits (NumDigits counts them
// without allocating) and its exponent keeps the result within an int64.
func hundredths(d decimal.Decimal) (int64, bool) {
	if d.NumDigits() > 15 {
		return 0, false
	}
	coefficient, exponent := d.CoefficientInt64(), d.Exponent()
	if exponent >= -2 {
		if exponent > 1 { // 15 digits and 3 zeros: 18 digits at most
			return 0, false
		}
		for ; exponent > -2; exponent-- {
			coefficient *= 10
		}
		return coefficient, true
	}
	dropped := -2 - exponent
	if dropped > 18 {
		return 0, true // less than a thousandth of a hundredth
	}
	unit := int64(1)
	for range dropped {
		unit *= 10
	}
	kept, rest := coefficient/unit, coefficient%unit
	if rest < 0 {
		rest = -rest
	}
	if rest*2 >= unit {
		if coefficient < 0 {
			kept--
		} else {
			kept++
		}
	}
	return kept, true
}

// UnmarshalDecimal reads decimal text; JSON numbers are refused because they
// may already have been rounded through a float by the client.
func UnmarshalDecimal(v any) (decimal.Decimal, error) {
	s, ok := v.(string)
	if !ok {
		return decimal.Decimal{}, apperr.Errorf(apperr.Invalid, "decimal must be a string such as \"1500000.00\"")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, apperr.Errorf(apperr.Invalid, "%s is not a decimal number", apperr.Quote(s))
	}
	return d, nil
}

// MarshalUUID writes an ID.
func MarshalUUID(id uuid.UUID) graphql.Marshaler { return graphql.MarshalUUID(id) }

// UnmarshalUUID reads an ID, which is always a UUID here.
func UnmarshalUUID(v any) (uuid.UUID, error) {
	id, err := graphql.UnmarshalUUID(v)
	if err != nil {
		return uuid.Nil, apperr.Errorf(apperr.Invalid, "ID %s is not a UUID", apperr.Quote(fmt.Sprint(v)))
	}
	return id, nil
}

// wireCursor is the wire form of a Relay cursor. entgql's own Cursor tags its
// value omitempty, so a zero value (inventory type code 0, an empty property
// code, a zero price) vanished from the cursor and the next page fell back to
// id order, repeating and skipping records. This form keeps every value.
type wireCursor struct {
	ID    uuid.UUID `msgpack:"i"`
	Value any       `msgpack:"v"`
}

// MarshalCursor writes a Relay cursor: opaque text, in the base64 alphabet
// entgql reads too, since its field collection decodes the after cursor of
// nested connections itself.
func MarshalCursor(c entgql.Cursor[uuid.UUID]) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		raw, err := msgpack.Marshal(wireCursor{ID: c.ID, Value: c.Value})
		if err != nil {
			panic(err) // only order field values, all encodable, reach here
		}
		_, _ = io.WriteString(w, strconv.Quote(base64.RawStdEncoding.EncodeToString(raw)))
	})
}

// UnmarshalCursor reads a Relay cursor as given by an earlier page.
func UnmarshalCursor(v any) (entgql.Cursor[uuid.UUID], error) {
	invalid := apperr.Errorf(apperr.Invalid, "cursor is not one this API gave out")
	s, ok := v.(string)
	if !ok {
		return entgql.Cursor[uuid.UUID]{}, invalid
	}
	raw, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return entgql.Cursor[uuid.UUID]{}, invalid
	}
	var c wireCursor
	if err := DecodeMsgpack(func() error { return msgpack.Unmarshal(raw, &c) }); err != nil {
		return entgql.Cursor[uuid.UUID]{}, invalid
	}
	return entgql.Cursor[uuid.UUID]{ID: c.ID, Value: c.Value}, nil
}

// DecodeMsgpack runs a msgpack decode of client bytes, turning a panic into
// an error: msgpack panics on some forged input (a bin value followed by a
// second value for the same key: "reflect.Value.SetBytes using unaddressable
// value"), and a cursor is whatever a client sends.
func DecodeMsgpack(decode func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack: %v", r)
		}
	}()
	return decode()
}

// Relay cursors carry the value of the orderBy field, msgpack-encoded by
// entgql. decimal.Decimal would otherwise go through its MarshalBinary, an
// opaque blob the database cannot compare; as exact text it compares as the
// number it is in both SQLite and PostgreSQL.
func init() {
	msgpack.Register(decimal.Decimal{}, func(e *msgpack.Encoder, v reflect.Value) error {
		return e.EncodeString(v.Interface().(decimal.Decimal).String())
	}, nil)
}
