package pgxread

import (
	"context"
	"database/sql"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/shopspring/decimal"
)

type named string

// postgresDB is a pool on TEST_DATABASE_URL's database whose connections
// know the types the store's do (internal/store's openPostgres registers
// the same two); the test is skipped without one.
func postgresDB(t *testing.T, params ...string) *sql.DB {
	t.Helper()
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("PostgreSQL only: set TEST_DATABASE_URL")
	}
	for _, param := range params {
		url += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + param
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(_ context.Context, conn *pgx.Conn) error {
		RegisterTypes(conn.TypeMap())
		return nil
	}))
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRowsReadThroughPgxScanAsDatabaseSQLDoes scans every kind of column
// (and NULL) into each destination ent or this service uses, through
// reader and through database/sql, and requires the same value, or an
// error from both.
func TestRowsReadThroughPgxScanAsDatabaseSQLDoes(t *testing.T) {
	db := postgresDB(t)
	reference, fast := entsql.OpenDB(dialect.Postgres, db), NewReader(db)

	str := func() any { return new(string) }
	nullStr := func() any { return new(sql.NullString) }
	anyv := func() any { return new(any) }
	unknown := func() any { return new(entsql.UnknownType) }
	bytes := func() any { return new([]byte) }
	integer := func() any { return new(int) }
	int64v := func() any { return new(int64) }
	int32v := func() any { return new(int32) }
	float := func() any { return new(float64) }
	nullInt := func() any { return new(sql.NullInt64) }
	nullTime := func() any { return new(sql.NullTime) }
	timev := func() any { return new(time.Time) }
	id := func() any { return new(uuid.UUID) }
	nullID := func() any { return &entsql.NullScanner{S: new(uuid.UUID)} }
	cases := []struct {
		expr  string
		dests []func() any
	}{
		{"'texto ñ'::text", []func() any{str, nullStr, anyv, unknown, bytes, func() any { return new(named) }, func() any { return new(*string) }}},
		{"''::text", []func() any{str, nullStr, anyv}},
		{"NULL::text", []func() any{str, nullStr, anyv, unknown, bytes, func() any { return new(*string) }}},
		{"'vc'::varchar(8)", []func() any{str, nullStr}},
		{"'b'::char(3)", []func() any{str, nullStr}},
		{"'3f2504e0-4f89-11d3-9a0c-0305e82c3301'::uuid", []func() any{id, nullID, str, nullStr, anyv}},
		{"NULL::uuid", []func() any{id, nullID, nullStr, anyv}},
		{"'2026-11-26T05:00:00.123456Z'::timestamptz", []func() any{nullTime, timev, anyv, str}},
		{"'1969-07-20T20:17:40.5Z'::timestamptz", []func() any{nullTime, timev}},
		{"NULL::timestamptz", []func() any{nullTime, timev, anyv}},
		{"'infinity'::timestamptz", []func() any{nullTime, timev, anyv, str}},
		{"'2026-01-02 03:04:05'::timestamp", []func() any{nullTime, timev, anyv}},
		{"'2026-11-26'::date", []func() any{timev, anyv}},
		{"true", []func() any{func() any { return new(sql.NullBool) }, func() any { return new(bool) }, anyv, str}},
		{"NULL::bool", []func() any{func() any { return new(sql.NullBool) }, func() any { return new(bool) }}},
		{"(-7)::int2", []func() any{nullInt, integer, int64v, int32v, anyv, str, float}},
		{"8::int4", []func() any{nullInt, integer, int64v, anyv}},
		{"9000000000::int8", []func() any{nullInt, integer, int64v, int32v, anyv, str}},
		{"NULL::int8", []func() any{nullInt, integer, anyv}},
		{"1.5::float8", []func() any{float, func() any { return new(sql.NullFloat64) }, anyv, str}},
		{"12345.67::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }, str, anyv, float}},
		{"1500000.50::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"0::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"100.00::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"1000000::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"0.10::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"123456789012.5::numeric", []func() any{func() any { return new(decimal.Decimal) }}},
		{"(-0.05)::numeric", []func() any{func() any { return new(decimal.Decimal) }}},
		{"9999999999999.99::numeric(15,2)", []func() any{func() any { return new(decimal.Decimal) }}},
		{"'NaN'::numeric", []func() any{func() any { return new(decimal.Decimal) }}},
		{"'\\x0102'::bytea", []func() any{bytes, anyv}},
		{`'{"a": 1}'::jsonb`, []func() any{bytes, str, anyv}},
	}
	ctx := context.Background()
	scan := func(drv dialect.Driver, expr string, dest any) error {
		var rows entsql.Rows
		if err := drv.Query(ctx, "SELECT "+expr+", $1::int", []any{1}, &rows); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatalf("%s: no row", expr)
		}
		var one int
		return rows.Scan(dest, &one)
	}
	for _, c := range cases {
		for _, newDest := range c.dests {
			want, got := newDest(), newDest()
			wantErr, gotErr := scan(reference, c.expr, want), scan(fast, c.expr, got)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s into %T: database/sql: %v; pgx: %v", c.expr, want, wantErr, gotErr)
				continue
			}
			if wantErr == nil && !reflect.DeepEqual(want, got) {
				t.Errorf("%s into %T: database/sql gave %#v; pgx %#v", c.expr, want, want, got)
			}
		}
	}
}

// TestIDsAreSentAsTheyAre: ids (passed as pointers into one array, see
// pgxStatement) reach PostgreSQL as the ids they are, in lists and beside other
// arguments.
func TestIDsAreSentAsTheyAre(t *testing.T) {
	db := postgresDB(t)
	a, b := uuid.New(), uuid.New()
	var rows entsql.Rows
	if err := NewReader(db).Query(context.Background(), "SELECT $1::uuid::text, $2::int, $3::uuid::text, $4::uuid = ANY(ARRAY[$1::uuid, $3::uuid])",
		[]any{a, 7, b, b}, &rows); err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var (
		gotA, gotB string
		n          int
		in         bool
	)
	if !rows.Next() {
		t.Fatal("no row")
	}
	if err := rows.Scan(&gotA, &n, &gotB, &in); err != nil {
		t.Fatal(err)
	}
	if gotA != a.String() || gotB != b.String() || n != 7 || !in {
		t.Fatalf("got %s %d %s %v, want %s 7 %s true", gotA, n, gotB, in, a, b)
	}
}

// TestIDListsAreSentAsOneArray: ent's lists of ids go to PostgreSQL as one
// uuid[] each and select what the lists selected; NOT IN, lists of other
// values and placeholders out of order are sent as they are.
func TestIDListsAreSentAsOneArray(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	for _, tc := range []struct {
		name, query, sent string
		args              []any
		arrays            int
		want              []string
	}{{
		name:   "lists of ids",
		query:  `SELECT u::text FROM unnest(ARRAY[$1::uuid, $2::uuid, $3::uuid]) AS u WHERE u IN ($4, $5) AND $6::int = 7 AND u NOT IN ($7) AND u IN ($8)`,
		sent:   `SELECT u::text FROM unnest(ARRAY[$1::uuid, $2::uuid, $3::uuid]) AS u WHERE u = ANY($4) AND $5::int = 7 AND u NOT IN ($6) AND u = ANY($7)`,
		args:   []any{a, b, c, a, b, 7, b, a},
		arrays: 2,
		want:   []string{a.String()},
	}, {
		name:  "a list of other values",
		query: `SELECT x::text FROM unnest(ARRAY[$1::int, $2::int]) AS x WHERE x IN ($3, $4)`,
		sent:  `SELECT x::text FROM unnest(ARRAY[$1::int, $2::int]) AS x WHERE x IN ($3, $4)`,
		args:  []any{1, 2, 2, 3},
		want:  []string{"2"},
	}, {
		name:  "placeholders out of order",
		query: `SELECT u::text FROM unnest(ARRAY[$2::uuid]) AS u WHERE u IN ($1)`,
		sent:  `SELECT u::text FROM unnest(ARRAY[$2::uuid]) AS u WHERE u IN ($1)`,
		args:  []any{c, c},
		want:  []string{c.String()},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sent, args := pgxStatement(tc.query, tc.args)
			arrays := 0
			for _, arg := range args {
				if _, ok := arg.(uuidArray); ok {
					arrays++
				}
			}
			if sent != tc.sent || arrays != tc.arrays {
				t.Errorf("sent %s with %d arrays, want %s with %d", sent, arrays, tc.sent, tc.arrays)
			}
			if os.Getenv("TEST_DATABASE_URL") == "" {
				return
			}
			// Every way pgx sends a statement: the modes that do not ask
			// PostgreSQL for the parameters' types serve PgBouncer.
			for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"} {
				var rows entsql.Rows
				if err := NewReader(postgresDB(t, "default_query_exec_mode="+mode)).Query(context.Background(), tc.query, tc.args, &rows); err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				var got []string
				for rows.Next() {
					var s string
					if err := rows.Scan(&s); err != nil {
						t.Fatal(err)
					}
					got = append(got, s)
				}
				rows.Close()
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s: selected %v, want %v", mode, got, tc.want)
				}
			}
		})
	}
}

// TestBufferedRowsHoldEveryRow reads more rows than one network read holds,
// and checks each one and the end.
func TestBufferedRowsHoldEveryRow(t *testing.T) {
	db := postgresDB(t)
	var rows entsql.Rows
	if err := NewReader(db).Query(context.Background(),
		"SELECT n, repeat('x', n % 100), CASE WHEN n % 3 = 0 THEN NULL ELSE n END FROM generate_series(1, $1::int) n", []any{20000}, &rows); err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
		var (
			got   int
			text  string
			maybe sql.NullInt64
		)
		if err := rows.Scan(&got, &text, &maybe); err != nil {
			t.Fatal(err)
		}
		if got != n || len(text) != n%100 || maybe.Valid == (n%3 == 0) {
			t.Fatalf("row %d: %d %q %v", n, got, text, maybe)
		}
	}
	if n != 20000 || rows.Next() {
		t.Fatalf("read %d rows", n)
	}
	if err := rows.Scan(new(int), new(string), new(any)); err == nil {
		t.Fatal("Scan after the last row answered")
	}
}

// parseDecimal reads numeric text as decimal.NewFromString does: the same
// coefficient and exponent, or its error.
func TestParseDecimalReadsWhatNewFromStringReads(t *testing.T) {
	for _, text := range []string{"0", "0.00", "-0.00", "3350000.00", "-12.5", "999999999999999999", "9999999999999999999",
		"123456789012345678.9", "1.", ".5", "-.5", "-", ".", "", "1.2.3", "1e5", "NaN", "Infinity", "+1", "00012.3400",
		"-999999999999999.99", "12345678901234567890.12"} {
		got, gotErr := parseDecimal(text)
		want, wantErr := decimal.NewFromString(text)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil &&
			(got.Exponent() != want.Exponent() || got.Coefficient().Cmp(want.Coefficient()) != 0) {
			t.Errorf("%q: read %s (exponent %d, %v), want %s (exponent %d, %v)", text, got, got.Exponent(), gotErr, want, want.Exponent(), wantErr)
		}
	}
}
