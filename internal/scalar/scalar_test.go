package scalar

import (
	"math/rand/v2"
	"strconv"
	"testing"

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
