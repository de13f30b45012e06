package direct_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/direct"
)

// marshaled is what gqlgen's marshaler writes.
func marshaled(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

func TestScalarsAreWrittenAsGqlgenWritesThem(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and backslash \`, "tab\tcr\rnl\n", "\x00\x01\x1f\x7f", "Bogotá, señor ñandú 🏠",
		"\xff\xfe invalid UTF-8 \xc3", "</script>&amp;", "\u2028\u2029"} {
		w := direct.NewWriter(0)
		w.String(s)
		if got, want := string(w.Bytes()), marshaled(graphql.MarshalString(s)); got != want {
			t.Errorf("String(%q): got %s, want %s", s, got, want)
		}
	}
	for _, n := range []int{0, 1, -1, 255, 256, math.MaxInt64, math.MinInt64} {
		w := direct.NewWriter(0)
		w.Int(n)
		if got, want := string(w.Bytes()), marshaled(graphql.MarshalInt(n)); got != want {
			t.Errorf("Int(%d): got %s, want %s", n, got, want)
		}
	}
	for _, b := range []bool{true, false} {
		w := direct.NewWriter(0)
		w.Bool(b)
		if got, want := string(w.Bytes()), marshaled(graphql.MarshalBoolean(b)); got != want {
			t.Errorf("Bool(%v): got %s, want %s", b, got, want)
		}
	}
	for _, id := range []uuid.UUID{uuid.New(), uuid.Max} { // gqlgen writes uuid.Nil as null: the generated code gives it up
		w := direct.NewWriter(0)
		w.UUID(id)
		if got, want := string(w.Bytes()), marshaled(graphql.MarshalUUID(id)); got != want {
			t.Errorf("UUID(%s): got %s, want %s", id, got, want)
		}
	}
}
