package rest

import "testing"

// A cell an inspector or an import filled with what a spreadsheet would run
// as a formula stays text; other cells are untouched.
func TestCSVCellsThatLookLikeFormulasStayText(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+57 300":                  "'+57 300",
		"-1":                       "'-1",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\t=1":                     "'\t=1",
		"Puerta rota":              "Puerta rota",
		"":                         "",
	} {
		if got := asText(in); got != want {
			t.Errorf("asText(%q) = %q, want %q", in, got, want)
		}
	}
}
