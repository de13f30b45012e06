package pgxread

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// entValues are the values ent passes that pgx did not send directly, with
// the text PostgreSQL holds for each (NULL as "NULL").
func entValues() []struct {
	value any
	oid   uint32
	text  string
} {
	id := uuid.MustParse("0b7a6f3e-2c4d-4e8f-9a1b-3c5d7e9f1a2b")
	price, tiny, big := decimal.RequireFromString("1850000.50"), decimal.RequireFromString("-0.0001"),
		decimal.RequireFromString("123456789012345678901234567890.000")
	return []struct {
		value any
		oid   uint32
		text  string
	}{
		{&id, pgtype.UUIDOID, id.String()},
		{(*uuid.UUID)(nil), pgtype.UUIDOID, "NULL"},
		{price, pgtype.NumericOID, "1850000.50"},
		{tiny, pgtype.NumericOID, "-0.0001"},
		{big, pgtype.NumericOID, "123456789012345678901234567890.000"},
		{decimal.Zero, pgtype.NumericOID, "0"},
		{&price, pgtype.NumericOID, "1850000.50"},
		{(*decimal.Decimal)(nil), pgtype.NumericOID, "NULL"},
	}
}

// TestEntValuesAreSentWithoutTheirValuer: an id by pointer and a decimal
// are encoded by a plan of their own, not pgx's driver.Valuer fallback (the
// text sent, refused in binary, parsed back and sent again), to the same
// bytes with fewer allocations.
func TestEntValuesAreSentWithoutTheirValuer(t *testing.T) {
	ours, pgxs := pgtype.NewMap(), pgtype.NewMap()
	RegisterTypes(ours)
	encode := func(m *pgtype.Map, v any, oid uint32) []byte {
		buf, err := m.Encode(oid, pgtype.BinaryFormatCode, v, nil)
		if err != nil {
			t.Fatalf("%T %v: %v", v, v, err)
		}
		return buf
	}
	for _, v := range entValues() {
		if v.text == "NULL" {
			continue // sent as NULL before any plan (pgtype.Map.Encode)
		}
		plan := ours.PlanEncode(v.oid, pgtype.BinaryFormatCode, v.value)
		if got := fmt.Sprintf("%T", plan); got != "*pgxread.idByPointer" && got != "*pgxread.decimalAsNumeric" {
			t.Errorf("%T %v is encoded by %s, want this package's plan", v.value, v.value, got)
		}
		if got, want := encode(ours, v.value, v.oid), encode(pgxs, v.value, v.oid); !sameValue(t, v.oid, got, want) {
			t.Errorf("%T %v is sent as %x, pgx's fallback sends %x", v.value, v.value, got, want)
		}
		allocs := func(m *pgtype.Map) float64 {
			return testing.AllocsPerRun(100, func() { _, _ = m.Encode(v.oid, pgtype.BinaryFormatCode, v.value, make([]byte, 0, 64)) })
		}
		if got, fallback := allocs(ours), allocs(pgxs); got >= fallback {
			t.Errorf("encoding %T %v allocates %.0f times, pgx's fallback %.0f", v.value, v.value, got, fallback)
		}
	}
}

// sameValue says whether two binary encodings of oid are the same value:
// a uuid the same bytes, a numeric the same number (pgx's fallback sent
// the decimal's shortest text, 1850000.5 for 1850000.50, so that its scale
// may differ: a numeric(15,2) column keeps two places either way).
func sameValue(t *testing.T, oid uint32, a, b []byte) bool {
	if oid != pgtype.NumericOID {
		return bytes.Equal(a, b)
	}
	m := pgtype.NewMap()
	var x, y pgtype.Numeric
	if err := m.Scan(oid, pgtype.BinaryFormatCode, a, &x); err != nil {
		t.Fatal(err)
	}
	if err := m.Scan(oid, pgtype.BinaryFormatCode, b, &y); err != nil {
		t.Fatal(err)
	}
	return decimal.NewFromBigInt(x.Int, x.Exp).Equal(decimal.NewFromBigInt(y.Int, y.Exp))
}

// TestEntValuesReachPostgreSQLExactly: each is the value PostgreSQL
// receives, decimals with their scale, nil pointers as NULL.
func TestEntValuesReachPostgreSQLExactly(t *testing.T) {
	db := postgresDB(t)
	for _, v := range entValues() {
		cast := map[uint32]string{pgtype.UUIDOID: "uuid", pgtype.NumericOID: "numeric"}[v.oid]
		var got string
		if err := db.QueryRowContext(context.Background(), "SELECT coalesce($1::"+cast+"::text, 'NULL')", v.value).Scan(&got); err != nil {
			t.Fatalf("%T %v: %v", v.value, v.value, err)
		}
		if got != v.text {
			t.Errorf("%T %v reached PostgreSQL as %s, want %s", v.value, v.value, got, v.text)
		}
	}
}
