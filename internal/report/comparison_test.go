package report_test

import (
	"context"
	"fmt"
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

// The comparison explains its table (the ratings, R, the dash), counts
// each change in the number it agrees with, names who signed each side,
// and keeps one photo of before under the collapsed unchanged items,
// captioned with its item right under it and listed with its SHA-256.
func TestTheComparisonExplainsItselfAndKeepsABeforePhotoOfWhatDidNotChange(t *testing.T) {
	needPoppler(t)
	c := comparison(t)
	c.From.Signers = []report.Signer{{Party: "AGENT", Name: "Ana Gómez"}, {Party: "OWNER", Name: "Luis Pérez"}}
	c.To.Signers = []report.Signer{{Party: "AGENT", Name: "Ana Gómez"}, {Party: "OWNER"}, {Party: "TENANT", Name: "Marta Ruiz"}}
	door := report.Photo{Reference: "puerta.jpg", SHA256: strings.Repeat("cd", 32), Thumbnail: thumb(t, 120)}
	c.Environments[0].Items[0].FromPhotos = []report.Photo{door, {Reference: "puerta-2.jpg", Thumbnail: thumb(t, 10)}}
	c.Environments[0].Items[0].ToPhotos = []report.Photo{{Reference: "puerta-despues.jpg", Thumbnail: thumb(t, 10)}}
	data, err := report.RenderComparison(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	file := pdfFile(t, data)
	text := layoutText(t, file)
	for _, want := range []string{
		"Elementos: 2 sin cambio, 1 empeoró, 1 mejoró, 1 nuevo, 1 ya no está; 2 por reparar desde entonces",
		"de 1 a 5 (1 = muy malo; 2 = malo; 3 = regular; 4 = bueno; 5 = muy bueno). R: el inventario lo marcó para reparar.",
		"(2024-01-30 15:00 UTC), por el agente Ana Gómez y el propietario Luis Pérez",
		"por el agente Ana Gómez, el propietario (nombre no registrado) y el arrendatario Marta Ruiz",
		"Sin cambio (2): Puerta, Zócalo", "puerta.jpg " + door.SHA256,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, text)
		}
	}
	for _, notWanted := range []string{"puerta-2.jpg", "puerta-despues.jpg"} {
		if strings.Contains(text, notWanted) {
			t.Errorf("the comparison shows %s: one photo of before an unchanged item, no more", notWanted)
		}
	}
	// The caption "Puerta" over "antes: puerta.jpg", the photo above it.
	all := words(t, file)
	found := false
	for i, w := range all {
		if w.text != "antes:" || all[i+1].text != "puerta.jpg" {
			continue
		}
		found = true
		var item *word
		for j := range all {
			if all[j].text == "Puerta" && all[j].page == w.page && all[j].yMin < w.yMin && all[j].yMin > w.yMin-8 && all[j].xMin == w.xMin {
				item = &all[j]
			}
		}
		if item == nil {
			t.Errorf("caption %v: no \"Puerta\" right above it", w)
			continue
		}
		if blank(pageImage(t, file, w.page), item.xMin+10, item.yMin-10) {
			t.Errorf("caption %v: the page above it is blank, not the door's photo", item)
		}
	}
	if !found {
		t.Errorf("no caption \"antes: puerta.jpg\"")
	}

	c.Summary = report.Summary{Unchanged: 1, Worse: 2, Better: 2, Added: 2, Removed: 2}
	data, err = report.RenderComparison(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Elementos: 1 sin cambio, 2 empeoraron, 2 mejoraron, 2 nuevos, 2 ya no están"; !strings.Contains(layoutText(t, pdfFile(t, data)), want) {
		t.Errorf("the comparison lacks %q", want)
	}
}

// A room whose table runs on to other pages repeats its heading and the
// column names at the top of each, above its rows; and no item's row is
// left at a page's foot without its photos.
func TestTheComparisonRepeatsItsHeadingsAfterAPageBreak(t *testing.T) {
	needPoppler(t)
	c := comparison(t)
	room := &c.Environments[0]
	for i := range 30 {
		room.Items = append(room.Items, report.ComparedItem{Name: fmt.Sprintf("Baldosa %d", i+1), Change: "WORSE", FromRating: intp(4), ToRating: intp(2),
			FromPhotos: []report.Photo{{Reference: fmt.Sprintf("baldosa-%d.jpg", i+1), Thumbnail: thumb(t, uint8(i*7))}}})
	}
	data, err := report.RenderComparison(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	all := words(t, pdfFile(t, data))
	pages := all[len(all)-1].page
	if pages < 3 {
		t.Fatalf("%d pages: the test wants the room across at least two page breaks", pages)
	}
	for page := 2; page <= pages; page++ {
		var heading, columns, firstRow, firstCaption *word
		for i := range all {
			w := &all[i]
			switch {
			case w.page != page:
			case w.text == "(continuación)" && heading == nil && line(all, page, w.yMin, 0, 600) == "Sala (nivel 1) (continuación)":
				heading = w
			case w.text == "Elemento" && columns == nil:
				columns = w
			case strings.HasPrefix(w.text, "Baldosa") || w.text == "Ventanal" || w.text == "Techo":
				if firstRow == nil || w.yMin < firstRow.yMin {
					firstRow = w
				}
			case w.text == "antes:":
				if firstCaption == nil || w.yMin < firstCaption.yMin {
					firstCaption = w
				}
			}
		}
		if firstRow == nil {
			continue // past the room: the acknowledgement and the photo list
		}
		if heading == nil || columns == nil {
			t.Errorf("page %d: the room runs on without its heading (%v) or its column names (%v)", page, heading, columns)
			continue
		}
		if !(heading.yMin < columns.yMin && columns.yMin < firstRow.yMin) {
			t.Errorf("page %d: heading %v, column names %v, first row %v: not in this order down the page", page, heading, columns, firstRow)
		}
		if cols := line(all, page, columns.yMin, 0, 600); cols != "Elemento Antes Después Cambio Comentarios (antes / después)" {
			t.Errorf("page %d: column names %q", page, cols)
		}
		if firstCaption != nil && firstCaption.yMin < firstRow.yMin {
			t.Errorf("page %d: a photo (%v) above the page's first row (%v), cut from its item", page, firstCaption, firstRow)
		}
	}
}
