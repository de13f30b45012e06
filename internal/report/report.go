// Package report renders an inventory's signed PDF: the document a property
// manager shows in a deposit dispute. It uses fpdf (github.com/go-pdf/fpdf),
// a maintained pure-Go PDF writer.
package report

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/propertyrecords/inventory/internal/drawing"
)

// Inventory is what the report shows.
type Inventory struct {
	// CompanyName is the management company's, printed at the top; ""
	// while the company has none.
	CompanyName string
	ID          string
	TypeName    string
	RentalPrice string
	// Deposit is the security deposit, decimal text in Currency; "" when
	// none was recorded.
	Deposit      string
	Currency     string
	CreatedAt    time.Time
	AgentSigned  time.Time
	OwnerSigned  time.Time
	TenantSigned time.Time
	// AgentName, OwnerName and TenantName are who signed for each party,
	// where the record says (those signed through the API do; imported
	// ones may not).
	AgentName, OwnerName, TenantName string
	// Required are the parties (AGENT, OWNER, TENANT) whose signatures
	// make it signed, each with a line to sign on; nil: the agent and the
	// owner.
	Required []string
	// Certificate is each signature as the service recorded it, stated on
	// the last page; none for records whose signatures an import brought
	// (it knew when, not how), whose PDF stays as it always rendered.
	Certificate    []Attestation
	SignatureDate  time.Time
	ApprovalCode   string
	RemoteSigned   bool
	PropertyCode   string
	PropertyType   string
	Address        string
	Neighborhood   string
	City           string
	PropertyLevels int
	Environments   []Environment
	// Drawings are the signatures the parties drew, by party (AGENT, OWNER,
	// TENANT), each drawn on its line.
	Drawings map[string]drawing.Drawing
	// Zone is where the report shows times, beside UTC (INVENTORY_TIME_ZONE;
	// DefaultTimeZone when nil).
	Zone *time.Location
}

// Environment is a room of the report.
type Environment struct {
	Name        string
	Level       int
	Description string
	Items       []Item
}

// Item is one line of a room.
type Item struct {
	Name        string
	Material    string
	Rating      int
	ToRepair    bool
	Description string
	Photos      []Photo
}

// Photo is a photo the report embeds: its stored file's name and SHA-256,
// and its thumbnail (internal/thumbnail), or why it has none. The report
// draws thumbnails only: it never decodes an original.
type Photo struct {
	Reference string
	SHA256    string
	Thumbnail []byte
	// NotShown, when set, is why the photo is not shown (the report says so
	// in its place, and still lists its SHA-256).
	NotShown string
}

// Render writes the report: a header naming the property and "página N de
// M" on every page, the inventory's particulars, each room as a table of its
// items (item, material, rating, to repair, comment) with their photos as
// thumbnails, the signature block, and the SHA-256 of every photo embedded.
// The same inventory always renders to the same bytes (the document dates
// are the signature date), so its SHA-256 is stable.
//
// It stops once ctx ends (a request's deadline), returning ctx's error and
// no document: a cut report is never half a PDF.
func Render(ctx context.Context, inv Inventory) ([]byte, error) {
	// A draft's date is the inventory's making: its bytes, and so the
	// SHA-256 a signer's page shows, depend on the record alone.
	date := inv.SignatureDate
	if date.IsZero() {
		date = inv.CreatedAt
	}
	pdf := newDocument("Inventario "+inv.ID, date)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	run := pages(pdf, tr, fmt.Sprintf("%s %s, %s · inventario %s", inv.PropertyCode, inv.Address, inv.City, short(inv.ID)))
	pdf.AddPage()

	companyName(pdf, tr, inv.CompanyName)
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(0, 10, tr("Inventario de "+inv.TypeName), "", 1, "L", false, 0, "")
	if inv.SignatureDate.IsZero() {
		// The document a party signs before the others have: never to be
		// taken for the signed inventory.
		pdf.SetFont("Helvetica", "B", 10)
		pdf.SetTextColor(163, 51, 12)
		pdf.CellFormat(0, 6, tr("BORRADOR: aún no lo han firmado todas las partes; no es el inventario firmado."), "", 1, "L", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	}
	pdf.SetFont("Helvetica", "", 10)
	lines := []string{
		"Inventario: " + inv.ID,
		"Inmueble: " + property(inv),
		"Canon de arrendamiento: " + money(inv.RentalPrice, inv.Currency),
	}
	if inv.Deposit != "" {
		lines = append(lines, "Depósito: "+money(inv.Deposit, inv.Currency))
	}
	lines = append(lines, "Creado: "+stamp(inv.CreatedAt, inv.Zone))
	for _, l := range lines {
		pdf.CellFormat(0, 6, tr(l), "", 1, "L", false, 0, "")
	}
	legend(pdf, tr)
	widths := []float64{40, 28, 22, 18, 82}
	columns := []string{"Elemento", "Material", "Calificación", "Reparar", "Comentario"}
	var photos []Photo
	var shown [][][]shownPhoto // by room and item
	for _, env := range inv.Environments {
		var room [][]shownPhoto
		for _, it := range env.Items {
			var item []shownPhoto
			for _, p := range it.Photos {
				photos = append(photos, p)
				item = append(item, shownPhoto{Photo: p, number: len(photos), room: env.Name, item: it.Name})
			}
			room = append(room, item)
		}
		shown = append(shown, room)
	}
	thumbs, err := newSprite(ctx, pdf, photos)
	if err != nil {
		return nil, err
	}
	for r, env := range inv.Environments {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: rendering inventory %s: %w", inv.ID, err)
		}
		title := fmt.Sprintf("%s (nivel %d)", env.Name, env.Level)
		roomHeading(pdf, tr, title)
		pdf.SetFont("Helvetica", "", 9)
		if env.Description != "" {
			pdf.MultiCell(0, 5, tr(env.Description), "", "L", false)
		}
		heading(pdf, tr, widths, columns)
		run.table = func() { continuedHeading(pdf, tr, title, widths, columns) }
		for i, it := range env.Items {
			repair := "no"
			var fill []int
			if it.ToRepair {
				repair, fill = "sí", []int{250, 215, 210}
			}
			cells := []string{it.Name, it.Material, fmt.Sprintf("%d/5", it.Rating), repair, it.Description}
			if len(it.Photos) > 0 {
				keep(pdf, rowHeight(pdf, tr, widths, cells)+photoHeight+1)
			}
			table(pdf, tr, widths, cells, fill)
			if len(it.Photos) > 0 {
				photoRow(pdf, tr, thumbs, shown[r][i])
			}
		}
		run.table = nil
	}
	signatures(pdf, tr, inv)
	photoIndex(pdf, tr, run, slices.Concat(slices.Concat(shown...)...))
	certificate(pdf, tr, inv)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("report: rendering inventory %s: %w", inv.ID, err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("report: rendering inventory %s: %w", inv.ID, err)
	}
	return buf.Bytes(), nil
}

// companyName prints the management company's name above a report's title,
// where it has one (a report of a company without a name renders as before).
func companyName(pdf *fpdf.Fpdf, tr func(string) string, name string) {
	if name == "" {
		return
	}
	pdf.SetFont("Helvetica", "B", 12)
	pdf.MultiCell(0, 6, tr(name), "", "L", false)
}

// newDocument is an A4 document whose bytes depend on its content only:
// date must be set (fpdf takes the time of rendering for a zero one).
func newDocument(title string, date time.Time) *fpdf.Fpdf {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCatalogSort(true) // fonts in a fixed order: the same bytes every time
	pdf.SetCreationDate(date)
	pdf.SetModificationDate(date)
	pdf.SetTitle(title, true)
	pdf.SetAuthor("Inventory and Property Records Service", true)
	pdf.SetAutoPageBreak(true, 18)
	return pdf
}

// running is what a page repeats at its top besides its header: while a
// room's table runs, its heading and column names (table, when set), so
// that rows a page break carried over never need the page before to be
// read.
type running struct{ table func() }

// pages puts header on top of every page, and what the running table
// repeats, and "página N de M" at its foot.
func pages(pdf *fpdf.Fpdf, tr func(string) string, header string) *running {
	run := &running{}
	pdf.AliasNbPages("{nb}")
	pdf.SetHeaderFunc(func() {
		pdf.SetFont("Helvetica", "", 8)
		pdf.SetTextColor(90, 90, 90)
		pdf.CellFormat(0, 5, tr(header), "B", 1, "L", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
		pdf.Ln(2)
		if run.table != nil {
			run.table() // fpdf restores the font and colours after the header
		}
	})
	pdf.SetFooterFunc(func() {
		pdf.SetY(-13)
		pdf.SetFont("Helvetica", "", 8)
		pdf.CellFormat(0, 5, tr(fmt.Sprintf("página %d de {nb}", pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	return run
}

// roomHeading starts a room: on the next page when its heading would not
// have its column names and a first row under it on this one.
func roomHeading(pdf *fpdf.Fpdf, tr func(string) string, title string) {
	if pdf.GetY()+4+8+2*9 > 279 {
		pdf.AddPage()
	}
	pdf.Ln(4)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(0, 8, tr(title), "B", 1, "L", false, 0, "")
}

// continuedHeading is a room's heading and column names again, on a page
// its table runs on to.
func continuedHeading(pdf *fpdf.Fpdf, tr func(string) string, title string, widths []float64, columns []string) {
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(0, 6, tr(title+" (continuación)"), "B", 1, "L", false, 0, "")
	heading(pdf, tr, widths, columns)
}

// property is the property's line: code, address, neighbourhood and city,
// then its type and levels as a person writes them.
func property(inv Inventory) string {
	var place []string
	for _, s := range []string{strings.TrimSpace(inv.PropertyCode + " " + inv.Address), inv.Neighborhood, inv.City} {
		if s != "" {
			place = append(place, s)
		}
	}
	line := strings.Join(place, ", ")
	if kind := propertyKind(inv.PropertyType, inv.PropertyLevels); kind != "" {
		line += " (" + kind + ")"
	}
	return line
}

// heading draws a table's row of column names.
func heading(pdf *fpdf.Fpdf, tr func(string) string, widths []float64, names []string) {
	table(pdf, tr, widths, names, []int{225, 225, 225})
}

// table draws one row of cells of these widths, as tall as its tallest
// cell's wrapped text; fill, when set, shades it (an RGB triple). A row
// that would not fit goes whole to the next page.
func table(pdf *fpdf.Fpdf, tr func(string) string, widths []float64, cells []string, fill []int) {
	const lineHeight = 4.5
	height := rowHeight(pdf, tr, widths, cells)
	keep(pdf, height)
	x, y := pdf.GetX(), pdf.GetY()
	if fill != nil {
		pdf.SetFillColor(fill[0], fill[1], fill[2])
	}
	for i, c := range cells {
		pdf.Rect(x, y, widths[i], height, map[bool]string{true: "FD", false: "D"}[fill != nil])
		pdf.SetXY(x+1, y)
		pdf.MultiCell(widths[i]-2, lineHeight, tr(c), "", "L", false)
		x += widths[i]
	}
	pdf.SetXY(10, y+height)
}

// shownPhoto is a photo of the signed report as its caption and the photo
// list at the end both name it: its number in the report (from 1, in the
// order of rooms and items), its room and its item, and the start of its
// SHA-256, so that a printed photo is matched to its file's digest.
type shownPhoto struct {
	Photo
	number     int
	room, item string
}

// name is "Foto 7".
func (p shownPhoto) name() string { return fmt.Sprintf("Foto %d", p.number) }

// place is "Sala · Puerta".
func (p shownPhoto) place() string { return p.room + " · " + p.item }

// digestStart is the first characters of the photo's SHA-256, as its
// caption prints them.
func (p shownPhoto) digestStart() string {
	if p.SHA256 == "" {
		return "sin SHA-256"
	}
	return p.SHA256[:min(len(p.SHA256), 8)]
}

// rowHeight is the height table gives a row of these cells.
func rowHeight(pdf *fpdf.Fpdf, tr func(string) string, widths []float64, cells []string) float64 {
	const lineHeight = 4.5
	pdf.SetFont("Helvetica", "", 8)
	lines := 1
	for i, c := range cells {
		lines = max(lines, len(pdf.SplitLines([]byte(tr(c)), widths[i]-2)))
	}
	return float64(lines) * lineHeight
}

// keep starts a new page unless height fits on this one: what must be read
// together (a row and the first of its photos) is not cut apart.
func keep(pdf *fpdf.Fpdf, height float64) {
	if pdf.GetY()+height > 279 {
		pdf.AddPage()
	}
}

// photoHeight is the height of a row of photos with their captions.
const photoHeight = 21.0 + 5.4 + 2

// photoRow draws an item's photos as a row of thumbnails under it, each
// captioned under itself: "Foto 7 · 3fa2b1c9", and its room and item.
func photoRow(pdf *fpdf.Fpdf, tr func(string) string, thumbs *sprite, photos []shownPhoto) {
	const w, h, caption = 28.0, 21.0, 5.4
	if pdf.GetY()+h+caption+2 > 279 {
		pdf.AddPage()
	}
	y := pdf.GetY() + 1
	for i, p := range photos {
		x := 12 + float64(i%6)*30
		if i > 0 && i%6 == 0 {
			y += h + caption + 2
			if y+h+caption > 279 {
				pdf.AddPage()
				y = pdf.GetY() + 1
			}
		}
		thumbs.draw(pdf, tr, p.Reference, x, y, w, h)
		pdf.SetFont("Helvetica", "", 5.5)
		for l, line := range []string{p.name() + " · " + p.digestStart(), p.place()} {
			pdf.SetXY(x, y+h+0.3+float64(l)*2.5)
			pdf.CellFormat(w, 2.5, tr(fit(pdf, tr, line, w)), "", 0, "L", false, 0, "")
		}
	}
	pdf.SetXY(10, y+h+caption+2)
}

// ratingWords say what each rating means, as the legend gives them.
var ratingWords = []string{1: "muy malo", 2: "malo", 3: "regular", 4: "bueno", 5: "muy bueno"}

// legend says how to read the tables: the rating scale and the to-repair
// mark, which a party disputing a deposit reads the report by.
func legend(pdf *fpdf.Fpdf, tr func(string) string) {
	scale := "Calificación de 1 a 5:"
	for r := 1; r <= 5; r++ {
		scale += fmt.Sprintf(" %d = %s;", r, ratingWords[r])
	}
	pdf.SetFont("Helvetica", "I", 8)
	pdf.MultiCell(0, 4, tr(scale[:len(scale)-1]+". Reparar \"sí\", en una fila sombreada de rojo: el elemento debe repararse."), "", "L", false)
	pdf.SetFont("Helvetica", "", 10)
}

// signatures is the block both parties' signatures stand for: the dates
// each signed, when the inventory was fully signed, how, and its approval
// code.
func signatures(pdf *fpdf.Fpdf, tr func(string) string, inv Inventory) {
	if pdf.GetY()+68 > 279 {
		pdf.AddPage()
	}
	pdf.Ln(6)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(0, 8, tr("Firmas"), "B", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	required := requiredParties(inv.Required)
	var lines []string
	var places []signaturePlace
	for _, p := range []struct {
		party, role, name string
		signed            time.Time
	}{
		{"AGENT", "agente", inv.AgentName, inv.AgentSigned},
		{"OWNER", "propietario", inv.OwnerName, inv.OwnerSigned},
		{"TENANT", "arrendatario", inv.TenantName, inv.TenantSigned},
	} {
		// A party not required shows only when it signed all the same.
		if !slices.Contains(required, p.party) && p.signed.IsZero() {
			continue
		}
		lines = append(lines, "Firma del "+p.role+": "+signer(p.name)+stamp(p.signed, inv.Zone)+way(inv.Certificate, p.party))
		if slices.Contains(required, p.party) {
			places = append(places, signaturePlace{caption: party(upperFirst(p.role), p.name), drawn: inv.Drawings[p.party]})
		}
	}
	lines = append(lines, "Fecha de firma: "+stamp(inv.SignatureDate, inv.Zone)+remote(inv.RemoteSigned && !eachWayKnown(inv)),
		"Código de aprobación: "+inv.ApprovalCode)
	for _, l := range lines {
		pdf.MultiCell(0, 6, tr(l), "", "L", false) // a signer's long name and how they signed wrap
	}
	signatureLines(pdf, tr, 14, places...)
}

// requiredParties is who must sign, the agent and the owner when unsaid.
func requiredParties(required []string) []string {
	if len(required) == 0 {
		return []string{"AGENT", "OWNER"}
	}
	return required
}

// partyPlaces are the lines of the required parties, captioned.
func partyPlaces(required []string) []signaturePlace {
	roles := map[string]string{"AGENT": "Agente", "OWNER": "Propietario", "TENANT": "Arrendatario"}
	var out []signaturePlace
	for _, p := range requiredParties(required) {
		out = append(out, signaturePlace{caption: roles[p]})
	}
	return out
}

// signaturePlace is a line to sign on: its caption, and the signature drawn
// on it, if any.
type signaturePlace struct {
	caption string
	drawn   drawing.Drawing
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// signatureLines draws a line to sign on for each caption, space below the
// text so far, each captioned under it: two side by side as they always
// were, three in three columns.
func signatureLines(pdf *fpdf.Fpdf, tr func(string) string, space float64, places ...signaturePlace) {
	y := pdf.GetY() + space
	left, width, gap := 20.0, 70.0, 30.0
	if len(places) > 2 {
		left, width, gap = 15, 52, 8
	}
	for i, place := range places {
		x := left + float64(i)*(width+gap)
		drawOn(pdf, place.drawn, x, y-space+1, width, space-1)
		pdf.Line(x, y, x+width, y)
		pdf.SetXY(x, y+1)
		ln := 0
		if i == len(places)-1 {
			ln = 1
		}
		pdf.CellFormat(width, 5, tr(place.caption), "", ln, "C", false, 0, "")
	}
}

// drawOn draws d as lines in the box at x, y of w by h millimetres, as
// large as fits, centred, its foot on the box's: vectors, so that the
// signature is as sharp printed as the signer drew it.
func drawOn(pdf *fpdf.Fpdf, d drawing.Drawing, x, y, w, h float64) {
	if d.Empty() {
		return
	}
	scale := min(w/drawing.Width, h/drawing.Height)
	left := x + (w-scale*drawing.Width)/2
	top := y + h - scale*drawing.Height
	at := func(p drawing.Point) (float64, float64) { return left + scale*float64(p.X), top + scale*float64(p.Y) }
	pdf.SetDrawColor(20, 30, 110)
	pdf.SetFillColor(20, 30, 110)
	pdf.SetLineWidth(0.35)
	pdf.SetLineCapStyle("round")
	pdf.SetLineJoinStyle("round")
	for _, stroke := range d.Strokes {
		if len(stroke) == 1 {
			px, py := at(stroke[0])
			pdf.Circle(px, py, 0.2, "F")
			continue
		}
		for j := 1; j < len(stroke); j++ {
			x1, y1 := at(stroke[j-1])
			x2, y2 := at(stroke[j])
			pdf.Line(x1, y1, x2, y2)
		}
	}
	pdf.SetDrawColor(0, 0, 0)
	pdf.SetFillColor(255, 255, 255)
	pdf.SetLineWidth(0.2)
	pdf.SetLineCapStyle("butt")
	pdf.SetLineJoinStyle("miter")
}

// signer is a signer's name as the signature line starts with it; nothing
// for a record that names none (an imported one), whose report stays as it
// always rendered.
func signer(name string) string {
	if name == "" {
		return ""
	}
	return name + ", "
}

// party is the caption under a signature line: the party, and who signed.
func party(role, name string) string {
	if name == "" {
		return role
	}
	return role + ": " + name
}

// digestTable lists each embedded photo's file name and SHA-256.
func digestTable(pdf *fpdf.Fpdf, tr func(string) string, run *running, photos []Photo) {
	if len(photos) == 0 {
		return
	}
	digestHeading(pdf, tr, run)
	defer func() { run.table = nil }()
	for _, p := range photos {
		pdf.SetFont("Helvetica", "", 7)
		pdf.CellFormat(70, 4, tr(p.Reference), "", 0, "L", false, 0, "")
		digestCell(pdf, p, 7)
	}
}

// photoIndex lists the signed report's photos as their captions name them
// (number, room and item), each with its file's name and SHA-256.
func photoIndex(pdf *fpdf.Fpdf, tr func(string) string, run *running, photos []shownPhoto) {
	if len(photos) == 0 {
		return
	}
	digestHeading(pdf, tr, run)
	defer func() { run.table = nil }()
	for _, p := range photos {
		// A file named by its id (36 characters and its extension) fits
		// whole beside the digest.
		pdf.SetFont("Helvetica", "", 7)
		pdf.CellFormat(12, 4, tr(p.name()), "", 0, "L", false, 0, "")
		pdf.CellFormat(40, 4, tr(fit(pdf, tr, p.place(), 39)), "", 0, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 6)
		pdf.CellFormat(48, 4, tr(fit(pdf, tr, p.Reference, 47)), "", 0, "L", false, 0, "")
		digestCell(pdf, p.Photo, 6.5)
	}
}

// digestHeading starts the photo list, and has the pages it runs on to
// say what they continue.
func digestHeading(pdf *fpdf.Fpdf, tr func(string) string, run *running) {
	const title = "Fotografías: SHA-256 de cada archivo"
	keep(pdf, 6+8+3*4) // the heading with its first rows
	pdf.Ln(6)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(0, 8, tr(title), "B", 1, "L", false, 0, "")
	run.table = func() {
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(0, 6, tr(title+" (continuación)"), "B", 1, "L", false, 0, "")
	}
}

// digestCell ends a row of the photo list with the photo's SHA-256.
func digestCell(pdf *fpdf.Fpdf, p Photo, size float64) {
	digest := p.SHA256
	if digest == "" {
		digest = "(no registrado)"
	}
	pdf.SetFont("Courier", "", size)
	pdf.CellFormat(0, 4, digest, "", 1, "L", false, 0, "")
}

// short is the first block of an id, enough to tell documents apart in a
// page header.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// way is how party signed, as its signature's line ends: remotely (from a
// link, or through the service) or in person; nothing where the record
// does not say (a signature an import brought).
func way(certificate []Attestation, party string) string {
	for _, a := range certificate {
		switch {
		case a.Party != party:
		case a.Method == "LINK":
			return ", firma remota desde un enlace"
		case a.Method == "CREDENTIAL" && a.Remote:
			return ", firma remota"
		case a.Method == "CREDENTIAL":
			return ", firma en persona"
		}
	}
	return ""
}

// eachWayKnown reports whether each signature's line says how it was made:
// then the signature date no longer says "(firma remota)" for them all,
// which an imported record's, knowing no more, still does.
func eachWayKnown(inv Inventory) bool {
	signed := 0
	for _, t := range []time.Time{inv.AgentSigned, inv.OwnerSigned, inv.TenantSigned} {
		if !t.IsZero() {
			signed++
		}
	}
	known := 0
	for _, a := range inv.Certificate {
		if way(inv.Certificate, a.Party) != "" {
			known++
		}
	}
	return signed > 0 && known == signed
}

// remote is the signature date's mark for a record that says only that
// the inventory was signed remotely, not by whom.
func remote(yes bool) string {
	if yes {
		return " (firma remota)"
	}
	return ""
}
