// Package pgxread is the store's read path on PostgreSQL: ent's driver for
// statements outside transactions, which reads rows through pgx itself
// rather than database/sql (see reader). It is the store's, and only the
// store opens it (internal/store: openDriver); it lives apart because it is
// a database driver of its own, with its own decoding, which a reader of
// internal/store need not read to follow how the store opens, migrates and
// routes.
package pgxread

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/shopspring/decimal"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// reader runs PostgreSQL statements outside transactions on pgx's own
// interface instead of through database/sql, and reads their rows whole
// while it holds the connection. database/sql hands every column of every
// row over as a boxed driver.Value (a string is decoded, copied and boxed)
// and then converts it again into ent's destination; on a nested tree that
// was about a third of the server's allocations and of its CPU. Here each
// statement's rows are copied as pgx receives them into one buffer, and
// Scan decodes ent's usual destinations (sql.NullString, uuid.UUID,
// sql.NullTime, …) straight from it; anything else is converted as
// database/sql and pgx's stdlib would.
//
// Transactions, Exec and the pool itself stay database/sql's.
type reader struct {
	*entsql.Driver
	db *sql.DB
}

func NewReader(db *sql.DB) dialect.Driver {
	return &reader{Driver: entsql.OpenDB(dialect.Postgres, db), db: db}
}

// badConnRetries is how often a statement is tried again on another
// connection when its connection turned out to be dead before the statement
// was sent, as database/sql does (two pooled connections, then a new one).
const badConnRetries = 3

func (d *reader) Query(ctx context.Context, query string, args, v any) error {
	rows, ok := v.(*entsql.Rows)
	argv, argsOK := args.([]any)
	if !ok || (!argsOK && args != nil) {
		return d.Driver.Query(ctx, query, args, v)
	}
	var (
		read *bufferedRows
		err  error
	)
	for range badConnRetries {
		read, err = d.read(ctx, query, argv)
		if !errors.Is(err, driver.ErrBadConn) {
			break
		}
	}
	if err != nil {
		return err
	}
	rows.ColumnScanner = read
	return nil
}

func (d *reader) read(ctx context.Context, query string, args []any) (*bufferedRows, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var read *bufferedRows
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		if pc.IsClosed() {
			return driver.ErrBadConn
		}
		query, args := pgxStatement(query, args)
		rows, err := pc.Query(ctx, query, args...)
		if err != nil {
			if pgconn.SafeToRetry(err) {
				return driver.ErrBadConn
			}
			return err
		}
		read, err = readRows(rows)
		return err
	})
	return read, err
}

// pgxStatement is the statement and its arguments as pgx gets them, after the
// result formats.
//
// A list of ids, ent's `"item_id" IN ($3, $4, $5)`, becomes `"item_id" =
// ANY($3)` with the ids as one uuid[] argument: the same rows (NULLs compare
// alike), but one statement text whatever the list's length, so pgx prepares
// it once per connection rather than once per length, PostgreSQL caches its
// plan, and the text is not dozens of placeholders long. A query whose
// placeholders are not numbered in order, each naming the next argument, as
// ent's builder writes them, is sent as it is.
func pgxStatement(query string, args []any) (string, []any) {
	if strings.Contains(query, inList+"$") {
		if rewritten, out, ok := idListsAsArrays(query, args); ok {
			return rewritten, out
		}
	}
	out, ids := newArgs(args)
	for _, arg := range args {
		out = append(out, ids.arg(arg))
	}
	return query, out
}

// inList opens a list of values in ent's SQL, before its first placeholder.
const inList = " IN ("

func idListsAsArrays(query string, args []any) (string, []any, bool) {
	out, ids := newArgs(args)
	var b strings.Builder
	b.Grow(len(query))
	next := 0 // the argument the next placeholder must name
	for i := 0; ; {
		j := strings.IndexByte(query[i:], '$')
		if j < 0 {
			b.WriteString(query[i:])
			break
		}
		j += i
		if strings.HasSuffix(query[:j], inList) && !strings.HasSuffix(query[:j], " NOT"+inList) {
			if n, end := idList(query, j, next, args); n > 0 {
				b.WriteString(query[i : j-len(inList)])
				out = append(out, ids.list(args[next:next+n]))
				b.WriteString(" = ANY($")
				b.WriteString(strconv.Itoa(len(out) - 1))
				b.WriteByte(')')
				next += n
				i = end
				continue
			}
		}
		n, end := placeholder(query, j)
		if n != next+1 || next >= len(args) {
			return "", nil, false
		}
		b.WriteString(query[i:j])
		out = append(out, ids.arg(args[next]))
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(len(out) - 1))
		next++
		i = end
	}
	return b.String(), out, next == len(args)
}

// idList reads the list of placeholders at query[i] ("$3, $4, $5)"): how
// many there are and where the list ends, or 0 unless they name arguments
// first+1, first+2, … in order and every one is an id.
func idList(query string, i, first int, args []any) (n, end int) {
	for {
		number, after := placeholder(query, i)
		if number != first+n+1 || first+n >= len(args) {
			return 0, 0
		}
		if _, ok := args[first+n].(uuid.UUID); !ok {
			return 0, 0
		}
		n++
		switch {
		case strings.HasPrefix(query[after:], ", $"):
			i = after + len(", ")
		case strings.HasPrefix(query[after:], ")"):
			return n, after + 1
		default:
			return 0, 0
		}
	}
}

// ids hold a statement's id arguments in one array, whose elements' addresses
// are passed: pgx encodes a uuid.UUID (through pgx-google-uuid) by boxing a
// copy of it, an allocation for each id, but a *pgtype.UUID or a slice of
// them as they are. It is never grown past its capacity.
type ids []pgtype.UUID

// newArgs starts a statement's arguments for pgx, with the result formats,
// and the array its ids go in.
func newArgs(args []any) ([]any, ids) {
	out := make([]any, 1, len(args)+1)
	out[0] = resultFormats
	for _, arg := range args {
		if _, ok := arg.(uuid.UUID); ok {
			return out, make(ids, 0, len(args))
		}
	}
	return out, nil
}

// arg is arg as pgx gets it.
func (a *ids) arg(arg any) any {
	if id, ok := arg.(uuid.UUID); ok {
		*a = append(*a, pgtype.UUID{Bytes: id, Valid: true})
		return &(*a)[len(*a)-1]
	}
	return arg
}

// list is a list of ids as one array argument.
func (a *ids) list(list []any) uuidArray {
	start := len(*a)
	for _, arg := range list {
		*a = append(*a, pgtype.UUID{Bytes: arg.(uuid.UUID), Valid: true})
	}
	return uuidArray((*a)[start:len(*a):len(*a)])
}

// uuidArray is a uuid[] argument that pgx encodes without an allocation per
// element: it hands out pointers, where a []pgtype.UUID is encoded through
// reflection and pgtype.FlatArray boxes each element.
type uuidArray []pgtype.UUID

func (a uuidArray) Dimensions() []pgtype.ArrayDimension {
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

func (a uuidArray) Index(i int) any { return &a[i] }

func (a uuidArray) IndexType() any { return new(pgtype.UUID) }

// RegisterIDArrays tells a connection's type map that a uuidArray is a
// uuid[]: pgx needs it where it does not ask PostgreSQL for the parameters'
// types (default_query_exec_mode exec or simple_protocol, as behind
// PgBouncer in transaction mode).
func RegisterIDArrays(m *pgtype.Map) { m.RegisterDefaultPgType(uuidArray(nil), "_uuid") }

// IDArray is ids as one uuid[] argument, for a statement that takes a list
// as an array itself.
func IDArray(ids []uuid.UUID) any {
	a := make(uuidArray, len(ids))
	for i, id := range ids {
		a[i] = pgtype.UUID{Bytes: id, Valid: true}
	}
	return a
}

// placeholder reads the number of the placeholder "$n" at query[i].
func placeholder(query string, i int) (n, end int) {
	end = i + 1
	for end < len(query) && query[end] >= '0' && query[end] <= '9' {
		n = n*10 + int(query[end]-'0')
		end++
	}
	if end == i+1 {
		return -1, end
	}
	return n, end
}

// resultFormats are the types PostgreSQL is asked to send in binary, as
// pgx's database/sql driver asks (so that values convert as they did
// through it: numeric as its text, with its scale), and uuid, 16 bytes
// rather than 36 characters.
var resultFormats = pgx.QueryResultFormatsByOID{
	pgtype.BoolOID: pgtype.BinaryFormatCode, pgtype.ByteaOID: pgtype.BinaryFormatCode,
	pgtype.CIDOID: pgtype.BinaryFormatCode, pgtype.DateOID: pgtype.BinaryFormatCode,
	pgtype.Float4OID: pgtype.BinaryFormatCode, pgtype.Float8OID: pgtype.BinaryFormatCode,
	pgtype.Int2OID: pgtype.BinaryFormatCode, pgtype.Int4OID: pgtype.BinaryFormatCode,
	pgtype.Int8OID: pgtype.BinaryFormatCode, pgtype.OIDOID: pgtype.BinaryFormatCode,
	pgtype.TimestampOID: pgtype.BinaryFormatCode, pgtype.TimestamptzOID: pgtype.BinaryFormatCode,
	pgtype.XIDOID: pgtype.BinaryFormatCode, pgtype.UUIDOID: pgtype.BinaryFormatCode,
}

// bufferedRows are a statement's rows, read whole: each value's bytes as
// PostgreSQL sent them, one after another in data. It is written once, by
// readRows, and only read after that, which is what lets strings point into
// it rather than be copied one by one.
type bufferedRows struct {
	columns []string
	oids    []uint32
	formats []int16
	data    []byte
	values  []span // len(columns) per row
	row     int    // the current row; -1 before the first
	rows    int
}

// span is a value's place in data; n < 0 is NULL.
type span struct{ off, n int32 }

func readRows(rows pgx.Rows) (*bufferedRows, error) {
	defer rows.Close()
	fields := rows.FieldDescriptions()
	b := &bufferedRows{columns: make([]string, len(fields)), oids: make([]uint32, len(fields)),
		formats: make([]int16, len(fields)), row: -1}
	for i, f := range fields {
		b.columns[i], b.oids[i], b.formats[i] = f.Name, f.DataTypeOID, f.Format
	}
	for rows.Next() {
		for _, raw := range rows.RawValues() {
			if raw == nil {
				b.values = append(b.values, span{n: -1})
				continue
			}
			if len(b.data)+len(raw) > maxBufferedBytes {
				return nil, fmt.Errorf("store: a statement's rows exceed %d bytes", maxBufferedBytes)
			}
			b.values = append(b.values, span{off: int32(len(b.data)), n: int32(len(raw))})
			b.data = append(b.data, raw...)
		}
		b.rows++
	}
	rows.Close()
	return b, rows.Err()
}

// maxBufferedBytes bounds one statement's rows in memory. Requests are
// bounded far below it by their price and answer size; it keeps the
// offsets within int32.
const maxBufferedBytes = 1 << 30

func (b *bufferedRows) Columns() ([]string, error) { return b.columns, nil }

// ColumnTypes is not available: ent falls back to scanning such columns
// into an any.
func (b *bufferedRows) ColumnTypes() ([]*sql.ColumnType, error) {
	return nil, errNoColumnTypes
}

// errNoColumnTypes is made once: ent asks for every row's unknown columns.
var errNoColumnTypes = errors.New("store: column types are not available on buffered rows")

// parseDecimal reads PostgreSQL's numeric text as decimal.NewFromString
// does: the same coefficient and exponent. Text of a sign, at most 18
// digits and a point (every amount the service stores) is read straight
// into an int64, without NewFromString's intermediate strings and big
// integers; anything else is NewFromString's.
func parseDecimal(text string) (decimal.Decimal, error) {
	var coefficient int64
	digits, places, point := 0, 0, false
	i := 0
	if len(text) > 0 && text[0] == '-' {
		i = 1
	}
	for ; i < len(text); i++ {
		switch c := text[i]; {
		case c >= '0' && c <= '9' && digits < 18:
			coefficient = coefficient*10 + int64(c-'0')
			digits++
			if point {
				places++
			}
		case c == '.' && !point:
			point = true
		default:
			return decimal.NewFromString(text)
		}
	}
	if digits == 0 {
		return decimal.NewFromString(text)
	}
	if text[0] == '-' {
		coefficient = -coefficient
	}
	return decimal.New(coefficient, int32(-places)), nil
}
func (b *bufferedRows) Close() error        { return nil }
func (b *bufferedRows) Err() error          { return nil }
func (b *bufferedRows) NextResultSet() bool { return false }

func (b *bufferedRows) Next() bool {
	if b.row+1 >= b.rows {
		b.row = b.rows
		return false
	}
	b.row++
	return true
}

func (b *bufferedRows) Scan(dest ...any) error {
	if b.row < 0 || b.row >= b.rows {
		return errors.New("sql: Scan called without calling Next")
	}
	if len(dest) != len(b.columns) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(b.columns), len(dest))
	}
	values := b.values[b.row*len(b.columns):]
	for i, d := range dest {
		var raw []byte
		if s := values[i]; s.n >= 0 {
			raw = b.data[s.off : s.off+s.n : s.off+s.n]
		}
		if err := b.scan(i, raw, values[i].n < 0, d); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d, name %q: %w", i, b.columns[i], err)
		}
	}
	return nil
}

// scan decodes ent's common destinations from PostgreSQL's binary (or, for
// text, only) form, and hands the rest to convert.
func (b *bufferedRows) scan(i int, raw []byte, null bool, dest any) error {
	oid, bin := b.oids[i], b.formats[i] == pgtype.BinaryFormatCode
	switch d := dest.(type) {
	case *sql.NullString:
		if null {
			*d = sql.NullString{}
			return nil
		}
		if textual(oid) {
			*d = sql.NullString{String: b.text(raw), Valid: true}
			return nil
		}
	case *string:
		if !null && textual(oid) {
			*d = b.text(raw)
			return nil
		}
	case *uuid.UUID:
		if !null && oid == pgtype.UUIDOID && bin && len(raw) == 16 {
			copy(d[:], raw)
			return nil
		}
	case *sql.NullTime:
		if null {
			*d = sql.NullTime{}
			return nil
		}
		if t, ok := timestamptz(oid, bin, raw); ok {
			*d = sql.NullTime{Time: t, Valid: true}
			return nil
		}
	case *time.Time:
		if t, ok := timestamptz(oid, bin, raw); ok && !null {
			*d = t
			return nil
		}
	case *sql.NullBool:
		if null {
			*d = sql.NullBool{}
			return nil
		}
		if oid == pgtype.BoolOID && bin && len(raw) == 1 {
			*d = sql.NullBool{Bool: raw[0] != 0, Valid: true}
			return nil
		}
	case *sql.NullInt64:
		if null {
			*d = sql.NullInt64{}
			return nil
		}
		if n, ok := integer(oid, bin, raw); ok {
			*d = sql.NullInt64{Int64: n, Valid: true}
			return nil
		}
	case *decimal.Decimal:
		if !null && oid == pgtype.NumericOID && !bin {
			// As decimal's Scan parses the text, without copying it first.
			n, err := parseDecimal(b.text(raw))
			if err == nil {
				*d = n
				return nil
			}
		}
	case *int:
		if n, ok := integer(oid, bin, raw); ok && !null {
			*d = int(n)
			return nil
		}
	case *int64:
		if n, ok := integer(oid, bin, raw); ok && !null {
			*d = n
			return nil
		}
	}
	var value driver.Value
	if !null {
		var err error
		if value, err = sqlValue(oid, b.formats[i], raw); err != nil {
			return err
		}
	}
	return convert(dest, value)
}

// text is raw as a string that shares the buffer's bytes (see bufferedRows).
func (b *bufferedRows) text(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	return unsafe.String(&raw[0], len(raw))
}

func textual(oid uint32) bool {
	switch oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		return true
	}
	return false
}

func integer(oid uint32, bin bool, raw []byte) (int64, bool) {
	if !bin {
		return 0, false
	}
	switch {
	case oid == pgtype.Int8OID && len(raw) == 8:
		return int64(binary.BigEndian.Uint64(raw)), true
	case oid == pgtype.Int4OID && len(raw) == 4:
		return int64(int32(binary.BigEndian.Uint32(raw))), true
	case oid == pgtype.Int2OID && len(raw) == 2:
		return int64(int16(binary.BigEndian.Uint16(raw))), true
	}
	return 0, false
}

// microsecondsFromUnixEpochToY2K is where PostgreSQL's timestamps count from.
const microsecondsFromUnixEpochToY2K = 946684800 * 1_000_000

// timestamptz decodes a binary timestamptz as pgx does (in the local time
// zone); infinities and values outside Go's range are left to pgx.
func timestamptz(oid uint32, bin bool, raw []byte) (time.Time, bool) {
	if oid != pgtype.TimestamptzOID || !bin || len(raw) != 8 {
		return time.Time{}, false
	}
	us := int64(binary.BigEndian.Uint64(raw))
	const limit = 1 << 60 // well inside both infinities and time.Time's range
	if us <= -limit || us >= limit {
		return time.Time{}, false
	}
	return time.Unix(microsecondsFromUnixEpochToY2K/1_000_000+us/1_000_000,
		(microsecondsFromUnixEpochToY2K%1_000_000*1_000)+(us%1_000_000*1_000)), true
}

// typeMaps are pgx type maps for converting what scan does not decode
// itself: a connection's own map is not safe to use once the connection is
// back in the pool. Each knows the types the connections know (pgx's, and
// google/uuid's).
var typeMaps = sync.Pool{New: func() any {
	m := pgtype.NewMap()
	pgxuuid.Register(m)
	return m
}}

// sqlValue is the driver.Value pgx's database/sql driver gives for a value
// of oid: its codec's database/sql value, or the text of a type pgx does not
// know.
func sqlValue(oid uint32, format int16, raw []byte) (driver.Value, error) {
	m := typeMaps.Get().(*pgtype.Map)
	defer typeMaps.Put(m)
	if t, ok := m.TypeForOID(oid); ok {
		return t.Codec.DecodeDatabaseSQLValue(m, oid, format, raw)
	}
	return string(raw), nil
}

// convert stores value in dest as database/sql's Rows.Scan would, for the
// destinations ent and this service scan into.
func convert(dest any, value driver.Value) error {
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(value)
	case *any:
		*d = value
		return nil
	case *[]byte:
		switch v := value.(type) {
		case nil:
			*d = nil
			return nil
		case []byte:
			*d = append([]byte(nil), v...)
			return nil
		case string:
			*d = []byte(v)
			return nil
		}
	}
	dv := reflect.ValueOf(dest)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return errors.New("destination not a pointer")
	}
	if value == nil {
		if e := dv.Elem(); e.Kind() == reflect.Pointer {
			e.SetZero()
			return nil
		}
		return fmt.Errorf("converting NULL to %s is unsupported", dv.Elem().Kind())
	}
	e := dv.Elem()
	if e.Kind() == reflect.Pointer {
		// A nullable column scanned into a pointer: the value goes into a new
		// element, as database/sql does.
		n := reflect.New(e.Type().Elem())
		if err := convert(n.Interface(), value); err != nil {
			return err
		}
		e.Set(n)
		return nil
	}
	if v := reflect.ValueOf(value); v.Type().AssignableTo(e.Type()) {
		e.Set(v)
		return nil
	} else if v.Type().ConvertibleTo(e.Type()) && v.Kind() == e.Kind() {
		e.Set(v.Convert(e.Type()))
		return nil
	}
	text := asText(value)
	switch e.Kind() {
	case reflect.String:
		e.SetString(text)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting driver.Value type %T (%q) to a %s: %w", value, text, e.Kind(), err)
		}
		e.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(text, 10, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting driver.Value type %T (%q) to a %s: %w", value, text, e.Kind(), err)
		}
		e.SetUint(n)
		return nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(text, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting driver.Value type %T (%q) to a %s: %w", value, text, e.Kind(), err)
		}
		e.SetFloat(f)
		return nil
	case reflect.Bool:
		v, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("converting driver.Value type %T (%q) to a bool: %w", value, text, err)
		}
		e.SetBool(v)
		return nil
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", value, dest)
}

func asText(value driver.Value) string {
	switch v := value.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(value)
}
