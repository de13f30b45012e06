package report

import (
	"time"

	"github.com/go-pdf/fpdf"
)

// Attestation is one signature as the certificate at the end of the signed
// PDF states it: who, how and when, and for a link the evidence the page
// kept of the signer.
type Attestation struct {
	Party  string // AGENT, OWNER or TENANT
	Name   string
	Method string // CREDENTIAL, LINK or IMPORTED
	// Credential is the name of the credential that sent the signature,
	// where it had one.
	Credential string
	At         time.Time
	Remote     bool
	// For a signature from a link: the signer's address and browser, and
	// the version of the consent text accepted.
	Address, UserAgent, Consent string
	// Document is the SHA-256 of the PDF the party signed; "" where the
	// service did not keep it (signatures made before it did).
	Document string
	// Drawn says whether the party drew their signature (on their line).
	Drawn bool
}

// certificate is the last page: each signature with how it was made, so
// that a dispute can tell who signed what, when and from where.
func certificate(pdf *fpdf.Fpdf, tr func(string) string, inv Inventory) {
	if len(inv.Certificate) == 0 {
		return
	}
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 12)
	pdf.CellFormat(0, 8, tr("Certificado de firmas"), "B", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 9)
	pdf.MultiCell(0, 5, tr("Cada firma de este inventario, como el servicio la registró al recibirla. Inventario "+inv.ID+"."), "", "L", false)
	roles := map[string]string{"AGENT": "Agente", "OWNER": "Propietario", "TENANT": "Arrendatario"}
	for _, a := range inv.Certificate {
		pdf.Ln(3)
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(0, 6, tr(roles[a.Party]+": "+orDash(a.Name)), "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 9)
		lines := []string{"Método: " + method(a), "Fecha: " + stamp(a.At, inv.Zone), "Firma remota: " + yesNo(a.Remote)}
		if a.Method == "LINK" {
			lines = append(lines, "Dirección: "+orDash(a.Address), "Navegador: "+orDash(a.UserAgent), "Texto de consentimiento: versión "+orDash(a.Consent))
		}
		if a.Document != "" {
			lines = append(lines, "Documento firmado (SHA-256 del PDF que se le mostró): "+a.Document)
		}
		lines = append(lines, "Firma dibujada: "+yesNo(a.Drawn))
		for _, l := range lines {
			pdf.MultiCell(0, 5, tr(l), "", "L", false)
		}
	}
}

// method says how a signature was made.
func method(a Attestation) string {
	switch a.Method {
	case "LINK":
		return "desde un enlace de firma enviado a la parte"
	case "CREDENTIAL":
		if a.Credential != "" {
			return "a través del servicio, con la credencial " + a.Credential
		}
		return "a través del servicio, enviada por la pasarela de la empresa"
	}
	return "registrada por una importación"
}

func yesNo(b bool) string {
	if b {
		return "sí"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
