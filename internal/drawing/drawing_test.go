package drawing

import (
	"strings"
	"testing"
)

func TestParseReadsWhatStringWrites(t *testing.T) {
	for _, s := range []string{"", "0,0", "10,20 30,40 50,60", "1,2 3,4;600,200;5,6 7,8"} {
		d, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if d.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, d.String())
		}
	}
	d, _ := Parse("1,2 3,4;5,6")
	if got, want := d.SVGPath(), "M1 2L3 4M5 6h0"; got != want {
		t.Errorf("SVGPath = %q, want %q", got, want)
	}
}

func TestParseRefusesWhatIsNotADrawing(t *testing.T) {
	many := func(n int, sep string) string { return strings.TrimSuffix(strings.Repeat("1,1"+sep, n), sep) }
	for _, tc := range []struct{ in, says string }{
		{"1,2 ", "two whole numbers"},
		{";1,2", "two whole numbers"},
		{"1;2", "two whole numbers"},
		{"1,2,3", "two whole numbers"},
		{"+1,2", "two whole numbers"},
		{"1.5,2", "two whole numbers"},
		{"NaN,1", "two whole numbers"},
		{"-1,2", "outside the 600 by 200 pad"},
		{"601,2", "outside"},
		{"1,201", "outside"},
		{"99999999999999999999,1", "two whole numbers"},
		{many(MaxStrokes+1, ";"), "more than 100 strokes"},
		{many(MaxPoints+1, " "), "more than 3000 points"},
		{strings.Repeat("1", MaxBytes+1), "bytes, more than"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%.40q) = %v, want an error saying %q", tc.in, err, tc.says)
		}
	}
	if _, err := Parse(many(MaxPoints, " ")); err != nil {
		t.Errorf("a drawing of MaxPoints points: %v", err)
	}
}
