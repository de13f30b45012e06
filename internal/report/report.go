// Package report renders an inventory's signed PDF: the document a property
// manager shows in a deposit dispute. It uses fpdf (github.com/go-pdf/fpdf),
// a maintained pure-Go PDF writer.
package report

import (
	"bytes"
	"fmt"
	"time"

	"github.com/go-pdf/fpdf"
)

// Inventory is what the report shows.
type Inventory struct {
	ID             string
	TypeName       string
	RentalPrice    string
	Currency       string
	CreatedAt      time.Time
	AgentSigned    time.Time
	OwnerSigned    time.Time
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
}

// Render writes the report. The same inventory always renders to the same
// bytes (the document dates are the signature date), so its SHA-256 is stable.
func Render(inv Inventory) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCatalogSort(true) // fonts in a fixed order: the same bytes every time
	pdf.SetCreationDate(inv.SignatureDate)
	pdf.SetModificationDate(inv.SignatureDate)
	pdf.SetTitle("Inventario "+inv.ID, true)
	pdf.SetAuthor("Inventory and Property Records Service", true)
	// Core fonts speak cp1252, which covers Spanish; the translator maps UTF-8 to it.
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.AddPage()

	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(0, 10, tr("Inventario de "+inv.TypeName), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	lines := []string{
		"Inventario: " + inv.ID,
		fmt.Sprintf("Inmueble: %s %s, %s, %s (%s, %d nivel(es))", inv.PropertyCode, inv.Address, inv.Neighborhood, inv.City, inv.PropertyType, inv.PropertyLevels),
		fmt.Sprintf("Canon de arrendamiento: %s %s", inv.RentalPrice, inv.Currency),
		"Creado: " + stamp(inv.CreatedAt),
		"Firma del agente: " + stamp(inv.AgentSigned),
		"Firma del propietario: " + stamp(inv.OwnerSigned),
		"Fecha de firma: " + stamp(inv.SignatureDate) + remote(inv.RemoteSigned),
		"Código de aprobación: " + inv.ApprovalCode,
	}
	for _, l := range lines {
		pdf.CellFormat(0, 6, tr(l), "", 1, "L", false, 0, "")
	}
	for _, env := range inv.Environments {
		pdf.Ln(4)
		pdf.SetFont("Helvetica", "B", 12)
		pdf.CellFormat(0, 8, tr(fmt.Sprintf("%s (nivel %d)", env.Name, env.Level)), "B", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 9)
		if env.Description != "" {
			pdf.MultiCell(0, 5, tr(env.Description), "", "L", false)
		}
		for _, it := range env.Items {
			repair := ""
			if it.ToRepair {
				repair = " - por reparar"
			}
			line := fmt.Sprintf("%s (%s): calificación %d/5%s", it.Name, it.Material, it.Rating, repair)
			if it.Description != "" {
				line += ". " + it.Description
			}
			pdf.MultiCell(0, 5, tr(line), "", "L", false)
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("report: rendering inventory %s: %w", inv.ID, err)
	}
	return buf.Bytes(), nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func remote(yes bool) string {
	if yes {
		return " (firma remota)"
	}
	return ""
}
