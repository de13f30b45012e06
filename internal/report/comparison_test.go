package report_test

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/report"
)

func intp(i int) *int { return &i }

// comparison is a room whose items changed every way, and two that did not.
func comparison(t *testing.T) report.Comparison {
	photo := func(name string, shade uint8) []report.Photo {
		return []report.Photo{{Reference: name, SHA256: strings.Repeat("ab", 32), Thumbnail: thumb(t, shade)}}
	}
	signed := time.Date(2025, 3, 4, 15, 0, 0, 0, time.UTC)
	return report.Comparison{
		Property: "INM-0007 Calle 5 # 10-20, Cali",
		From:     report.Side{ID: "11111111-2222-3333-4444-555555555555", TypeName: "colocación", CreatedAt: signed.Add(-400 * 24 * time.Hour), SignatureDate: signed.Add(-399 * 24 * time.Hour)},
		To:       report.Side{ID: "66666666-7777-8888-9999-000000000000", TypeName: "desocupación", CreatedAt: signed.Add(-24 * time.Hour), SignatureDate: signed},
		Summary:  report.Summary{Unchanged: 2, Worse: 1, Better: 1, Added: 1, Removed: 1, NewlyToRepair: 2},
		Environments: []report.ComparedRoom{{Name: "Sala", Level: 1, Presence: "BOTH", Items: []report.ComparedItem{
			{Name: "Puerta", Change: "UNCHANGED", FromRating: intp(4), ToRating: intp(4)},
			{Name: "Ventanal", Change: "BETTER", FromRating: intp(2), ToRating: intp(5), FromToRepair: true,
				FromPhotos: photo("ventanal-antes-con-un-nombre-de-archivo-muy-largo-que-no-cabe-en-su-columna.jpg", 60), ToPhotos: photo("ventanal-despues.jpg", 200)},
			{Name: "Lámpara", Change: "ADDED", ToRating: intp(3)},
			{Name: "Piso", Change: "WORSE", FromRating: intp(4), ToRating: intp(2), ToToRepair: true,
				FromPhotos: photo("piso-antes.jpg", 90), ToPhotos: photo("piso-despues.jpg", 30)},
			{Name: "Cortina", Change: "REMOVED", FromRating: intp(3)},
			{Name: "Techo", Change: "UNCHANGED", FromRating: intp(3), ToRating: intp(3), ToToRepair: true},
			{Name: "Zócalo", Change: "UNCHANGED", FromRating: intp(5), ToRating: intp(5)},
		}}},
	}
}

// The comparison puts first what a deposit is argued over, collapses what
// did not change, captions each photo under itself within its half of the
// page, prints only glyphs its font has, and ends with a block both parties
// sign. Its pages are rendered to images (pdftoppm) to check where the
// captions fall.
func TestTheComparisonLeadsWithWhatChangedAndCaptionsEachPhoto(t *testing.T) {
	for _, tool := range []string{"pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " (poppler-utils) is not installed: .ci/run installs it")
		}
	}
	data, err := report.RenderComparison(context.Background(), comparison(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "comparison.pdf")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", file, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	order := []string{"Piso 4/5 2/5 R empeoró", "Techo 3/5 3/5 R", "Lámpara - 3/5 nuevo", "Cortina 3/5 - ya no está", "Ventanal 2/5 R 5/5 mejoró",
		"Sin cambio (2): Puerta, Zócalo", "Conformidad", "Agente Propietario"}
	at := 0
	for _, want := range order {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("after %d of the expected lines, the comparison lacks %q:\n%s", at, want, text)
		}
		at += i + len(want)
	}
	if !strings.Contains(text, "» 66666666") || strings.Contains(text, "11111111 . 66666666") {
		t.Errorf("the running header's separator: %.200s", text)
	}

	// Each caption sits right under its photo, in its own half of the page:
	// at 72 dpi a point is a pixel, so the image above a caption's first
	// word is the photo's, not the white of the page.
	bbox, err := exec.Command("pdftotext", "-bbox", file, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("pdftoppm", "-png", "-r", "72", "-f", "1", "-l", "1", file, filepath.Join(dir, "page")).Run(); err != nil {
		t.Fatalf("rendering the first page: %v", err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
	if len(pages) != 1 {
		t.Fatalf("rendered %v, want one page", pages)
	}
	f, err := os.Open(pages[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">(antes:|después:)</word>`)
	const middle = 105 * 72 / 25.4 // the page's middle, in points
	captions := word.FindAllStringSubmatch(string(bbox), -1)
	if len(captions) != 4 {
		t.Fatalf("%d photo captions, want 4", len(captions))
	}
	for _, m := range captions {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		if left := x < middle; left != (m[4] == "antes:") {
			t.Errorf("caption %q at x=%.0f pt: in the wrong half of the page", m[4], x)
		}
		r, g, b, _ := img.At(int(x)+10, int(y)-10).RGBA()
		if r>>8 > 240 && g>>8 > 240 && b>>8 > 240 {
			t.Errorf("caption %q at %.0f,%.0f pt: the page above it is blank, not its photo", m[4], x, y)
		}
	}
	// The long file name is cut in its middle, within its half of the page.
	long := regexp.MustCompile(`<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">ventanal-antes[^<…]*…[^<]*columna\.jpg</word>`).FindStringSubmatch(string(bbox))
	if long == nil {
		t.Fatalf("the long file name's caption: %v", long)
	}
	if xMax, _ := strconv.ParseFloat(long[1], 64); xMax > middle {
		t.Errorf("the long file name's caption runs to x=%.0f pt, past the middle of the page (%.0f)", xMax, middle)
	}
}
