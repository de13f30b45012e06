package report

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-pdf/fpdf"
)

// Comparison is what the comparison report shows: two inventories of a
// property side by side.
type Comparison struct {
	Property     string // its address line
	From, To     Side
	Summary      Summary
	Environments []ComparedRoom
}

// Side is one of the two inventories.
type Side struct {
	ID, TypeName  string
	CreatedAt     time.Time
	SignatureDate time.Time
}

// Summary counts the items by change.
type Summary struct {
	Unchanged, Worse, Better, Added, Removed, NewlyToRepair int
}

// ComparedRoom is an environment of the comparison.
type ComparedRoom struct {
	Name     string
	Level    int
	Presence string // BOTH, ADDED, REMOVED
	Items    []ComparedItem
}

// ComparedItem is an item of both sides.
type ComparedItem struct {
	Name                           string
	Change                         string // UNCHANGED, WORSE, BETTER, ADDED, REMOVED
	FromRating, ToRating           *int
	FromToRepair, ToToRepair       bool
	FromDescription, ToDescription string
	FromPhotos, ToPhotos           []Photo
}

// changeWords are the changes as the report says them.
var changeWords = map[string]string{"UNCHANGED": "sin cambio", "WORSE": "empeoró", "BETTER": "mejoró",
	"ADDED": "nuevo", "REMOVED": "ya no está"}

// RenderComparison writes the comparison report: the summary, then each
// room as a table of its items with both ratings, the changed rows shaded
// (worse in red, better in green), and the photos of both sides in pairs.
// Like Render, it stops once ctx ends, with ctx's error and no document.
func RenderComparison(ctx context.Context, c Comparison) ([]byte, error) {
	pdf := newDocument("Comparación de inventarios", c.To.SignatureDate)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	header := fmt.Sprintf("%s · %s → %s", c.Property, short(c.From.ID), short(c.To.ID))
	pages(pdf, tr, header)
	pdf.AddPage()

	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(0, 10, tr("Comparación de inventarios"), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	for _, l := range []string{
		"Inmueble: " + c.Property,
		fmt.Sprintf("Antes: %s %s, creado %s, firmado %s", c.From.TypeName, c.From.ID, stamp(c.From.CreatedAt), stamp(c.From.SignatureDate)),
		fmt.Sprintf("Después: %s %s, creado %s, firmado %s", c.To.TypeName, c.To.ID, stamp(c.To.CreatedAt), stamp(c.To.SignatureDate)),
		fmt.Sprintf("Elementos: %d sin cambio, %d empeoraron, %d mejoraron, %d nuevos, %d ya no están; %d por reparar desde entonces",
			c.Summary.Unchanged, c.Summary.Worse, c.Summary.Better, c.Summary.Added, c.Summary.Removed, c.Summary.NewlyToRepair),
	} {
		pdf.MultiCell(0, 6, tr(l), "", "L", false)
	}
	widths := []float64{44, 20, 20, 24, 82}
	var photos []Photo
	for _, room := range c.Environments {
		for _, it := range room.Items {
			photos = append(append(photos, it.FromPhotos...), it.ToPhotos...)
		}
	}
	thumbs, err := newSprite(ctx, pdf, photos)
	if err != nil {
		return nil, err
	}
	cut := func(err error) error {
		return fmt.Errorf("report: rendering the comparison of %s and %s: %w", c.From.ID, c.To.ID, err)
	}
	for _, room := range c.Environments {
		if err := ctx.Err(); err != nil {
			return nil, cut(err)
		}
		pdf.Ln(4)
		pdf.SetFont("Helvetica", "B", 12)
		title := fmt.Sprintf("%s (nivel %d)", room.Name, room.Level)
		switch room.Presence {
		case "ADDED":
			title += " - solo después"
		case "REMOVED":
			title += " - solo antes"
		}
		pdf.CellFormat(0, 8, tr(title), "B", 1, "L", false, 0, "")
		heading(pdf, tr, widths, []string{"Elemento", "Antes", "Después", "Cambio", "Comentarios (antes / después)"})
		for _, it := range room.Items {
			comment := it.FromDescription
			if it.ToDescription != it.FromDescription {
				comment = joinNonEmpty(it.FromDescription, it.ToDescription, " / ")
			}
			var fill []int
			switch it.Change {
			case "WORSE":
				fill = []int{250, 215, 210}
			case "BETTER":
				fill = []int{215, 240, 215}
			case "ADDED", "REMOVED":
				fill = []int{235, 235, 235}
			}
			table(pdf, tr, widths, []string{it.Name, rating(it.FromRating, it.FromToRepair), rating(it.ToRating, it.ToToRepair),
				changeWords[it.Change], comment}, fill)
			if len(it.FromPhotos)+len(it.ToPhotos) > 0 {
				photoPairs(pdf, tr, thumbs, it.FromPhotos, it.ToPhotos)
			}
		}
	}
	digestTable(pdf, tr, photos)
	if err := ctx.Err(); err != nil {
		return nil, cut(err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, cut(err)
	}
	return buf.Bytes(), nil
}

// rating is "4/5", with the to-repair flag, or "-" where the item is not.
func rating(r *int, toRepair bool) string {
	if r == nil {
		return "-"
	}
	s := strconv.Itoa(*r) + "/5"
	if toRepair {
		s += " R"
	}
	return s
}

func joinNonEmpty(a, b, sep string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + sep + b
}

// photoPairs draws an item's photos before and after as thumbnails, side by
// side, each captioned with its file's name.
func photoPairs(pdf *fpdf.Fpdf, tr func(string) string, thumbs *sprite, before, after []Photo) {
	const w, h = 28.0, 21.0
	rows := max(len(before), len(after))
	for i := range rows {
		if pdf.GetY()+h+6 > 280 {
			pdf.AddPage()
		}
		y := pdf.GetY()
		for side, photos := range [][]Photo{before, after} {
			x := 20.0 + float64(side)*90
			if i < len(photos) {
				thumbs.draw(pdf, tr, photos[i].Reference, x, y, w, h)
				pdf.SetXY(x+w+2, y+h/2-2)
				pdf.SetFont("Helvetica", "", 7)
				label := []string{"antes", "después"}[side]
				pdf.CellFormat(55, 4, tr(label+": "+photos[i].Reference), "", 0, "L", false, 0, "")
			}
		}
		pdf.SetXY(10, y+h+2)
	}
	pdf.SetFont("Helvetica", "", 9)
}
