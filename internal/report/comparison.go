package report

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// Comparison is what the comparison report shows: two inventories of a
// property side by side.
type Comparison struct {
	// CompanyName is the management company's, printed at the top; ""
	// while the company has none.
	CompanyName  string
	Property     string // its address line
	From, To     Side
	Summary      Summary
	Environments []ComparedRoom
	// Required are the parties (AGENT, OWNER, TENANT) who acknowledge it,
	// each with a line: those who must sign the later inventory; nil: the
	// agent and the owner.
	Required []string
	// Zone is where the report shows times, beside UTC (DefaultTimeZone
	// when nil).
	Zone *time.Location
}

// Side is one of the two inventories.
type Side struct {
	ID, TypeName string
	// Deposit is its security deposit, decimal text in Currency; "" when
	// none was recorded.
	Deposit, Currency string
	CreatedAt         time.Time
	SignatureDate     time.Time
	// Signers are who signed it, in the order AGENT, OWNER, TENANT.
	Signers []Signer
}

// Signer is one party's signature of a side.
type Signer struct {
	Party string // AGENT, OWNER or TENANT
	// Name is who signed; "" where the record names nobody (an import's).
	Name string
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
// room as a table of what changed, first what a deposit is argued over
// (worse, newly to repair, added, removed, then better), each row with both
// ratings, shaded (worse in red, better in green), and the photos of both
// sides in pairs; the room's unchanged items in one line; then a block for
// both parties to acknowledge it.
// Like Render, it stops once ctx ends, with ctx's error and no document.
func RenderComparison(ctx context.Context, c Comparison) ([]byte, error) {
	pdf := newDocument("Comparación de inventarios", c.To.SignatureDate)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	// » rather than →: the core fonts' encoding (cp1252) has no arrow,
	// which printed as a dot.
	header := fmt.Sprintf("%s · %s » %s", c.Property, short(c.From.ID), short(c.To.ID))
	run := pages(pdf, tr, header)
	pdf.AddPage()

	companyName(pdf, tr, c.CompanyName)
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(0, 10, tr("Comparación de inventarios"), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	for _, l := range []string{
		"Inmueble: " + c.Property,
		fmt.Sprintf("Antes: %s %s, creado %s, firmado %s%s", c.From.TypeName, c.From.ID, stamp(c.From.CreatedAt, c.Zone), stamp(c.From.SignatureDate, c.Zone), signedBy(c.From.Signers)),
		fmt.Sprintf("Después: %s %s, creado %s, firmado %s%s", c.To.TypeName, c.To.ID, stamp(c.To.CreatedAt, c.Zone), stamp(c.To.SignatureDate, c.Zone), signedBy(c.To.Signers)),
		"Elementos: " + strings.Join([]string{plural(c.Summary.Unchanged, "sin cambio", "sin cambio"), plural(c.Summary.Worse, "empeoró", "empeoraron"),
			plural(c.Summary.Better, "mejoró", "mejoraron"), plural(c.Summary.Added, "nuevo", "nuevos"),
			plural(c.Summary.Removed, "ya no está", "ya no están")}, ", ") +
			fmt.Sprintf("; %d por reparar desde entonces", c.Summary.NewlyToRepair),
		deposits(c.From, c.To),
	} {
		if l != "" {
			pdf.MultiCell(0, 6, tr(l), "", "L", false)
		}
	}
	comparisonLegend(pdf, tr)
	widths := []float64{44, 20, 20, 24, 82}
	columns := []string{"Elemento", "Antes", "Después", "Cambio", "Comentarios (antes / después)"}
	var photos []Photo
	for _, room := range c.Environments {
		changed, same := changesFirst(room.Items)
		for _, it := range changed {
			photos = append(append(photos, it.FromPhotos...), it.ToPhotos...)
		}
		for _, it := range same {
			if len(it.FromPhotos) > 0 {
				photos = append(photos, it.FromPhotos[0])
			}
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
		title := fmt.Sprintf("%s (nivel %d)", room.Name, room.Level)
		switch room.Presence {
		case "ADDED":
			title += " - solo después"
		case "REMOVED":
			title += " - solo antes"
		}
		roomHeading(pdf, tr, title)
		heading(pdf, tr, widths, columns)
		run.table = func() { continuedHeading(pdf, tr, title, widths, columns) }
		changed, same := changesFirst(room.Items)
		for _, it := range changed {
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
			cells := []string{it.Name, rating(it.FromRating, it.FromToRepair), rating(it.ToRating, it.ToToRepair), changeWords[it.Change], comment}
			if len(it.FromPhotos)+len(it.ToPhotos) > 0 {
				keep(pdf, rowHeight(pdf, tr, widths, cells)+pairHeight+1) // the row with its first photos
			}
			table(pdf, tr, widths, cells, fill)
			if len(it.FromPhotos)+len(it.ToPhotos) > 0 {
				photoPairs(pdf, tr, thumbs, it.FromPhotos, it.ToPhotos)
			}
		}
		if len(same) > 0 {
			var names []string
			for _, it := range same {
				names = append(names, it.Name)
			}
			table(pdf, tr, []float64{190}, []string{fmt.Sprintf("Sin cambio (%d): %s", len(same), strings.Join(names, ", "))}, nil)
			unchangedPhotos(pdf, tr, thumbs, same)
		}
		run.table = nil
	}
	acknowledgement(pdf, tr, c.Required)
	digestTable(pdf, tr, run, photos)
	if err := ctx.Err(); err != nil {
		return nil, cut(err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, cut(err)
	}
	return buf.Bytes(), nil
}

// changeRank orders a room's changes: what a deposit is argued over first.
func changeRank(it ComparedItem) int {
	switch {
	case it.Change == "WORSE":
		return 0
	case it.ToToRepair && !it.FromToRepair && it.Change != "ADDED":
		return 1
	case it.Change == "ADDED":
		return 2
	case it.Change == "REMOVED":
		return 3
	case it.Change == "BETTER":
		return 4
	}
	return 5
}

// changesFirst splits a room's items into its changes, most argued over
// first (otherwise in the room's order), and those unchanged.
func changesFirst(items []ComparedItem) (changed, same []ComparedItem) {
	for _, it := range items {
		if changeRank(it) == 5 {
			same = append(same, it)
		} else {
			changed = append(changed, it)
		}
	}
	slices.SortStableFunc(changed, func(a, b ComparedItem) int { return changeRank(a) - changeRank(b) })
	return changed, same
}

// acknowledgement is where both parties sign that they have read the
// comparison: what turns it from one side's document into an agreed one.
func acknowledgement(pdf *fpdf.Fpdf, tr func(string) string, required []string) {
	if pdf.GetY()+45 > 279 {
		pdf.AddPage()
	}
	pdf.Ln(6)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(0, 8, tr("Conformidad"), "B", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	pdf.MultiCell(0, 5, tr("Las partes han revisado esta comparación y declaran que registra el estado del inmueble "+
		"en cada inventario. Firma, nombre y fecha:"), "", "L", false)
	signatureLines(pdf, tr, 16, partyPlaces(required)...)
}

// comparisonLegend says how to read the tables: the ratings, the mark R,
// the dash and the shading.
func comparisonLegend(pdf *fpdf.Fpdf, tr func(string) string) {
	scale := ""
	for r := 1; r <= 5; r++ {
		scale += fmt.Sprintf("%d = %s; ", r, ratingWords[r])
	}
	pdf.SetFont("Helvetica", "I", 8)
	pdf.MultiCell(0, 4, tr("Antes y Después: la calificación del elemento en cada inventario, de 1 a 5 ("+strings.TrimSuffix(scale, "; ")+
		"). R: el inventario lo marcó para reparar. \"-\": el elemento no está en ese inventario. Filas sombreadas: "+
		"de rojo, empeoró; de verde, mejoró; de gris, nuevo o ya no está. De cada elemento sin cambio se muestra una foto de antes."), "", "L", false)
	pdf.SetFont("Helvetica", "", 10)
}

// signedBy names a side's signers, after its signature date: "; firmado
// por el agente Ana Gómez y el propietario Luis Pérez".
func signedBy(signers []Signer) string {
	roles := map[string]string{"AGENT": "el agente", "OWNER": "el propietario", "TENANT": "el arrendatario"}
	var names []string
	for _, s := range signers {
		name := s.Name
		if name == "" {
			name = "(nombre no registrado)"
		}
		names = append(names, roles[s.Party]+" "+name)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return ", por " + names[0]
	}
	return ", por " + strings.Join(names[:len(names)-1], ", ") + " y " + names[len(names)-1]
}

// unchangedPhotos draws, under a room's unchanged items, one photo of each
// as the earlier inventory recorded it, captioned with the item and the
// file: what was there before stays proven without its own row.
func unchangedPhotos(pdf *fpdf.Fpdf, tr func(string) string, thumbs *sprite, same []ComparedItem) {
	const w, h, caption = 28.0, 21.0, 5.4
	y, n := pdf.GetY()+1, 0
	for _, it := range same {
		if len(it.FromPhotos) == 0 {
			continue
		}
		if n%6 == 0 {
			if n > 0 {
				y += h + caption + 2
			}
			if y+h+caption > 279 {
				pdf.AddPage() // its room's heading repeated above
				y = pdf.GetY() + 1
			}
		}
		x := 12 + float64(n%6)*30
		p := it.FromPhotos[0]
		thumbs.draw(pdf, tr, p.Reference, x, y, w, h)
		pdf.SetFont("Helvetica", "", 5.5)
		for l, line := range []string{it.Name, "antes: " + p.Reference} {
			pdf.SetXY(x, y+h+0.3+float64(l)*2.5)
			pdf.CellFormat(w, 2.5, tr(fit(pdf, tr, line, w)), "", 0, "L", false, 0, "")
		}
		n++
	}
	if n > 0 {
		pdf.SetXY(10, y+h+caption+2)
	}
	pdf.SetFont("Helvetica", "", 9)
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

// pairHeight is the height of a row of photoPairs.
const pairHeight = 21.0 + 3.5 + 2

// photoPairs draws an item's photos before and after as thumbnails, the
// before ones in the left half of the page and the after ones in the right,
// each captioned under it with its side and its file's name.
func photoPairs(pdf *fpdf.Fpdf, tr func(string) string, thumbs *sprite, before, after []Photo) {
	const w, h, caption, column = 28.0, 21.0, 3.5, 85.0
	rows := max(len(before), len(after))
	for i := range rows {
		keep(pdf, pairHeight)
		y := pdf.GetY()
		for side, photos := range [][]Photo{before, after} {
			x := 15.0 + float64(side)*(column+10)
			if i < len(photos) {
				thumbs.draw(pdf, tr, photos[i].Reference, x, y, w, h)
				pdf.SetXY(x, y+h+0.5)
				pdf.SetFont("Helvetica", "", 6)
				label := []string{"antes", "después"}[side]
				pdf.CellFormat(column, caption, tr(fit(pdf, tr, label+": "+photos[i].Reference, column)), "", 0, "L", false, 0, "")
			}
		}
		pdf.SetXY(10, y+h+caption+2)
	}
	pdf.SetFont("Helvetica", "", 9)
}

// fit shortens s, in the middle, to fit width at the current font: a file
// name keeps its start and its extension.
func fit(pdf *fpdf.Fpdf, tr func(string) string, s string, width float64) string {
	if pdf.GetStringWidth(tr(s)) <= width {
		return s
	}
	r := []rune(s)
	for keep := len(r) - 1; keep > 4; keep-- {
		head, tail := keep/2, keep-keep/2
		if t := string(r[:head]) + "…" + string(r[len(r)-tail:]); pdf.GetStringWidth(tr(t)) <= width {
			return t
		}
	}
	return string(r[:4]) + "…"
}

// deposits is the header's deposit line: the deposit the two inventories
// record (the move-in's, typically), both where they differ, "" where
// neither records one.
func deposits(from, to Side) string {
	amount := func(s Side) string { return money(s.Deposit, s.Currency) }
	switch {
	case from.Deposit == "" && to.Deposit == "":
		return ""
	case to.Deposit == "", from.Deposit == to.Deposit && from.Currency == to.Currency:
		return "Depósito: " + amount(from)
	case from.Deposit == "":
		return "Depósito: " + amount(to)
	}
	return fmt.Sprintf("Depósito: %s antes, %s después", amount(from), amount(to))
}
