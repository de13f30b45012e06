package scalar

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// AppendDecimal writes every amount as StringFixed(2) does: the amounts the
// database holds, and any coefficient and exponent around its fast path's
// bounds, rounded half away from zero.
func TestAppendDecimalWritesWhatStringFixedWrites(t *testing.T) {
	cases := []decimal.Decimal{
		decimal.Zero, decimal.New(0, -2), decimal.New(-4, -3), decimal.New(-5, -3), decimal.New(5, -3),
		decimal.New(1005, -3), decimal.New(-1005, -3), decimal.New(1004999, -6), decimal.New(999999999999999, -2),
		decimal.New(999999999999999, 1), decimal.New(999999999999999, 2), decimal.New(1, -25), decimal.New(-5, -19),
		decimal.New(1000000000000000, -2), decimal.RequireFromString("123456789012345678901234.567"),
		decimal.RequireFromString("-0.005"), decimal.RequireFromString("3350000.00"),
	}
	random := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		digits := 1 + random.IntN(17)
		coefficient := random.Int64N(pow10(digits))
		if random.IntN(2) == 0 {
			coefficient = -coefficient
		}
		cases = append(cases, decimal.New(coefficient, int32(random.IntN(26)-22)))
	}
	for _, d := range cases {
		got, want := string(AppendDecimal(nil, d)), strconv.Quote(d.StringFixed(2))
		if got != want {
			t.Fatalf("%s (coefficient %s, exponent %d): wrote %s, want %s", d, d.Coefficient(), d.Exponent(), got, want)
		}
	}
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func BenchmarkAppendDecimal(b *testing.B) {
	d := decimal.RequireFromString("3350000.00")
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDecimal(buf[:0], d)
	}
}

// AppendTime writes every time as AppendFormat with TimeLayout does, in
// UTC and quoted: any instant of years 0 to 9999 in any zone, at any
// fraction of a second, and the years outside them, which take
// AppendFormat's own path.
func TestAppendTimeWritesWhatAppendFormatWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+1800), time.FixedZone("west", -11*3600)}
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	last := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 12, 0, 0, 1_000_000, time.FixedZone("east", 14*3600)), {},
	}
	for range 100_000 {
		at := time.Unix(first+r.Int64N(last-first), r.Int64N(1e9))
		times = append(times, at.In(zones[r.IntN(len(zones))]))
	}
	for _, at := range times {
		want := `"` + at.UTC().Format(TimeLayout) + `"`
		if got := string(AppendTime([]byte("x"), at)); got != "x"+want {
			t.Fatalf("%v: wrote %s, want %s", at, got, want)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	at := time.Date(2026, 11, 28, 23, 41, 7, 123_000_000, time.UTC)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTime(buf[:0], at)
	}
}
