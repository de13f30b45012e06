package direct_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/direct"
)

// written is what write writes.
func written(write func(w *direct.Writer)) string {
	b, _ := direct.Answer(0, func(w *direct.Writer) error { write(w); return nil })
	return string(b)
}

// marshaled is what gqlgen's marshaler writes.
func marshaled(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

func TestScalarsAreWrittenAsGqlgenWritesThem(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and backslash \`, "tab\tcr\rnl\n", "\x00\x01\x1f\x7f", "Bogotá, señor ñandú 🏠",
		"\xff\xfe invalid UTF-8 \xc3", "</script>&amp;", "\u2028\u2029"} {
		if got, want := written(func(w *direct.Writer) { w.String(s) }), marshaled(graphql.MarshalString(s)); got != want {
			t.Errorf("String(%q): got %s, want %s", s, got, want)
		}
	}
	for _, n := range []int{0, 1, -1, 255, 256, math.MaxInt64, math.MinInt64} {
		if got, want := written(func(w *direct.Writer) { w.Int(n) }), marshaled(graphql.MarshalInt(n)); got != want {
			t.Errorf("Int(%d): got %s, want %s", n, got, want)
		}
	}
	for _, b := range []bool{true, false} {
		if got, want := written(func(w *direct.Writer) { w.Bool(b) }), marshaled(graphql.MarshalBoolean(b)); got != want {
			t.Errorf("Bool(%v): got %s, want %s", b, got, want)
		}
	}
	for _, id := range []uuid.UUID{uuid.New(), uuid.Max} { // gqlgen writes uuid.Nil as null: the generated code gives it up
		if got, want := written(func(w *direct.Writer) { w.UUID(id) }), marshaled(graphql.MarshalUUID(id)); got != want {
			t.Errorf("UUID(%s): got %s, want %s", id, got, want)
		}
	}
}
