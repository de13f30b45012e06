package signpage

import (
	"strconv"
	"strings"
)

// texts are the pages' words in one language.
type texts struct {
	Lang                                                      string
	Title, Intro, Kind, Made, Version, Level                  string
	Item, Material, Rating, ToRepair, Yes, No, NoItems        string
	SignHeading, Consent, ConsentVersion, NameLabel           string
	ConsentCheck, Submit                                      string
	Agent, Owner, Tenant                                      string
	Signed, SignedText                                        string
	Closed, Used, Expired, Cancelled, Outdated, AlreadySigned string
	NotFound, NotFoundText, Forbidden, ForbiddenText          string
	ReadOnly, BadForm, NoConsent, BadName                     string
	TooMany, TooManyText, Busy, BusyText                      string
	Document, DraftLink, Digest, Photo, PhotoNotShown         string
	DrawLabel, DrawHint, Clear, Changed, BadDrawing, YourSign string
}

// The consent text accepted is records.ConsentVersion: change that with
// these words.
var spanish = texts{
	Lang:           "es",
	Title:          "Firma del inventario",
	Intro:          "Se le pide firmar este inventario como {party}. Léalo antes de firmar.",
	Kind:           "Tipo",
	Made:           "Elaborado",
	Version:        "versión",
	Level:          "nivel",
	Item:           "Elemento",
	Material:       "Material",
	Rating:         "Estado",
	ToRepair:       "Por reparar",
	Yes:            "Sí",
	No:             "No",
	NoItems:        "Sin elementos.",
	SignHeading:    "Firmar",
	Consent:        "Declaro que leí el inventario anterior, que describe el estado del inmueble, y lo firmo electrónicamente como {party}, a distancia. Escribir mi nombre y enviar este formulario equivale a mi firma.",
	ConsentVersion: "Texto de consentimiento, versión",
	NameLabel:      "Su nombre completo",
	ConsentCheck:   "Acepto y firmo el inventario.",
	Submit:         "Firmar",
	Agent:          "agente",
	Owner:          "propietario",
	Tenant:         "arrendatario",
	Signed:         "Inventario firmado",
	SignedText:     "Su firma quedó registrada. Puede cerrar esta página.",
	Closed:         "Este enlace ya no sirve para firmar",
	Used:           "Ya se firmó con este enlace: cada enlace sirve para una sola firma.",
	Expired:        "El enlace venció. Pida uno nuevo a quien se lo envió.",
	Cancelled:      "El enlace fue cancelado o reemplazado por uno más reciente. Use el último que recibió.",
	Outdated:       "El inventario cambió después de enviarse el enlace. Pida uno nuevo para firmar la versión actual.",
	AlreadySigned:  "Esta parte ya firmó el inventario, o el inventario ya está firmado.",
	NotFound:       "Enlace no encontrado",
	NotFoundText:   "Este enlace no existe. Revise que lo copió completo.",
	Forbidden:      "No se pudo firmar",
	ForbiddenText:  "El formulario no es válido o caducó. Abra el enlace de nuevo y vuelva a firmar. No se registró ninguna firma.",
	ReadOnly:       "El servicio no acepta firmas en este momento.",
	BadForm:        "Formulario no válido",
	NoConsent:      "Marque la casilla de aceptación para firmar.",
	BadName:        "Escriba su nombre (hasta 200 caracteres).",
	TooMany:        "Demasiadas solicitudes",
	TooManyText:    "Espere un momento y vuelva a intentarlo.",
	Busy:           "Servicio no disponible",
	BusyText:       "No pudimos atender la solicitud. Inténtelo de nuevo en unos minutos; no se registró ninguna firma.",
	Document:       "Documento que firma",
	DraftLink:      "Ver el inventario en PDF (borrador, tal como lo firma)",
	Digest:         "Huella SHA-256 del PDF",
	Photo:          "Foto de",
	PhotoNotShown:  "Foto no mostrada",
	DrawLabel:      "Dibuje su firma",
	DrawHint:       "Con el dedo o el ratón, dentro del recuadro (opcional).",
	Clear:          "Borrar el dibujo",
	Changed:        "El inventario cambió desde que abrió esta página (otra parte firmó, por ejemplo). Revíselo de nuevo y vuelva a firmar; no se registró ninguna firma.",
	BadDrawing:     "El dibujo de la firma no es válido. Bórrelo y dibuje de nuevo.",
	YourSign:       "Su firma",
}

var english = texts{
	Lang:           "en",
	Title:          "Sign the inventory",
	Intro:          "You are asked to sign this inventory as the {party}. Read it before you sign.",
	Kind:           "Type",
	Made:           "Made",
	Version:        "version",
	Level:          "level",
	Item:           "Item",
	Material:       "Material",
	Rating:         "Condition",
	ToRepair:       "To repair",
	Yes:            "Yes",
	No:             "No",
	NoItems:        "No items.",
	SignHeading:    "Sign",
	Consent:        "I declare that I have read the inventory above, which describes the state of the property, and I sign it electronically as the {party}, remotely. Typing my name and sending this form is my signature.",
	ConsentVersion: "Consent text, version",
	NameLabel:      "Your full name",
	ConsentCheck:   "I accept and sign the inventory.",
	Submit:         "Sign",
	Agent:          "agent",
	Owner:          "owner",
	Tenant:         "tenant",
	Signed:         "Inventory signed",
	SignedText:     "Your signature is recorded. You may close this page.",
	Closed:         "This link no longer signs",
	Used:           "This link has been used: each link signs once.",
	Expired:        "The link has expired. Ask whoever sent it for a new one.",
	Cancelled:      "The link was cancelled, or replaced by a newer one. Use the last one you received.",
	Outdated:       "The inventory changed after the link was sent. Ask for a new one to sign the current version.",
	AlreadySigned:  "This party has signed the inventory already, or the inventory is signed.",
	NotFound:       "Link not found",
	NotFoundText:   "This link does not exist. Check that you copied all of it.",
	Forbidden:      "Could not sign",
	ForbiddenText:  "The form is not valid or has expired. Open the link again and sign anew. No signature was recorded.",
	ReadOnly:       "The service does not take signatures at the moment.",
	BadForm:        "Invalid form",
	NoConsent:      "Tick the box to accept, to sign.",
	BadName:        "Type your name (up to 200 characters).",
	TooMany:        "Too many requests",
	TooManyText:    "Wait a moment and try again.",
	Busy:           "Service unavailable",
	BusyText:       "We could not serve the request. Try again in a few minutes; no signature was recorded.",
	Document:       "The document you sign",
	DraftLink:      "See the inventory as a PDF (the draft, as you sign it)",
	Digest:         "SHA-256 fingerprint of the PDF",
	Photo:          "Photo of",
	PhotoNotShown:  "Photo not shown",
	DrawLabel:      "Draw your signature",
	DrawHint:       "With your finger or the mouse, inside the box (optional).",
	Clear:          "Clear the drawing",
	Changed:        "The inventory changed since you opened this page (another party signed, say). Review it again and sign anew; no signature was recorded.",
	BadDrawing:     "The drawn signature is not valid. Clear it and draw again.",
	YourSign:       "Your signature",
}

// language is English when the browser prefers it to Spanish, else
// Spanish (the service's people and records are Colombian).
func language(acceptLanguage string) texts {
	bestEN, bestES := -1.0, -1.0
	for part := range strings.SplitSeq(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		switch primary {
		case "en":
			bestEN = max(bestEN, q)
		case "es":
			bestES = max(bestES, q)
		}
	}
	if bestEN > 0 && bestEN > bestES {
		return english
	}
	return spanish
}
