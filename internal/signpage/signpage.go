// Package signpage serves the page a party signs an inventory on from a
// link (requestSignature): GET /sign/{token} shows the inventory and a
// form, POST /sign/{token} signs. The token is the credential: no header,
// no company. The page is plain HTML (html/template, embedded) that works
// without JavaScript and asks nothing of any other server, in Spanish or
// English by Accept-Language. The rules (what a link may sign, the
// evidence kept) are internal/records'; this package is the page.
package signpage

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/drawing"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/records"
)

// Path starts the pages' paths; the token follows it.
const Path = "/sign/"

// ContentSecurityPolicy is the pages': nothing loads but the page itself,
// its inline style, its photos (data: URLs) and the pad's script served
// beside it (PadScript, no inline script), the form posts only here, no
// script may fetch anything, and no other site frames it (a signature
// clicked through a frame is not one).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// PadScript is the path of the signature pad's script, which the pages
// load from beside them: without it (no JavaScript) the form signs with
// the typed name alone.
const PadScript = Path + "pad.js"

// DefaultRatePerMinute is the requests an address may send to the pages a
// minute, in a burst as large: a person reads, types and posts a few
// times; a script trying tokens is stopped (tokens are 256 bits: the limit
// spares the database, not the secret).
const DefaultRatePerMinute = 30

// csrfCookie holds the form's double-submit token.
const csrfCookie = "sign_csrf"

// maxForm bounds what a POST may send: a name, a checkbox, two tokens
// and a drawing (internal/drawing bounds it).
const maxForm = 8<<10 + drawing.MaxBytes*3/2

//go:embed page.html
var pageHTML string

//go:embed pad.js
var padJS []byte

var page = template.Must(template.New("page").Parse(pageHTML))

// Options are the pages' settings.
type Options struct {
	// Limiter limits each address's requests; nil: none.
	Limiter *auth.Limiter
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// signer's address; any other connection's address is the signer's.
	TrustedProxies []netip.Prefix
	Log            *slog.Logger
}

// Pages serves the signature links' pages.
type Pages struct {
	records *records.Service
	opts    Options
}

// New returns the pages, signing through svc.
func New(svc *records.Service, opts Options) *Pages {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Pages{records: svc, opts: opts}
}

// Show serves GET: the inventory and the form, or why the link no longer
// signs.
func (p *Pages) Show(w http.ResponseWriter, r *http.Request) {
	t, ok := p.begin(w, r)
	if !ok {
		return
	}
	pg, err := p.records.OpenLinkDraft(r.Context(), r.PathValue("token"))
	if err != nil {
		p.fail(w, r, t, err)
		return
	}
	if pg.State != records.LinkOpen {
		p.closed(w, t, pg)
		return
	}
	if p.records.ReadOnly() {
		p.render(w, http.StatusServiceUnavailable, t, view{Title: t.Forbidden, Message: t.ReadOnly})
		return
	}
	csrf, err := newCSRF()
	if err != nil {
		p.fail(w, r, t, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: csrf, Path: Path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: strings.HasPrefix(files.BaseURL(r.Context()), "https:")})
	p.render(w, http.StatusOK, t, p.form(t, pg, r.PathValue("token"), csrf, "", ""))
}

// Draft serves GET …/draft.pdf: the PDF the party would sign, as the page
// offers it (its SHA-256 is the form's), or why the link no longer signs.
func (p *Pages) Draft(w http.ResponseWriter, r *http.Request) {
	t, ok := p.begin(w, r)
	if !ok {
		return
	}
	pg, err := p.records.OpenLinkDraft(r.Context(), r.PathValue("token"))
	switch {
	case err != nil:
		p.fail(w, r, t, err)
	case pg.State != records.LinkOpen:
		p.closed(w, t, pg)
	case pg.Draft == nil: // a service that renders no drafts
		p.render(w, http.StatusNotFound, t, view{Title: t.NotFound, Message: t.NotFoundText})
	default:
		h := w.Header()
		h.Set("Content-Type", "application/pdf")
		h.Set("Content-Disposition", `inline; filename="inventario-`+pg.Request.InventoryID.String()+`-borrador.pdf"`)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.Itoa(len(pg.Draft.PDF)))
		h.Del("Vary")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(pg.Draft.PDF)
	}
}

// Script serves the signature pad's script (pad.js): the same for every
// link, so it names none and may be cached.
func (p *Pages) Script(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(padJS)
}

// Sign serves POST: with the form's CSRF token matching its cookie, and
// consent given, it signs; the answer says it is signed, or what is wrong.
func (p *Pages) Sign(w http.ResponseWriter, r *http.Request) {
	t, ok := p.begin(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		p.render(w, http.StatusBadRequest, t, view{Title: t.BadForm})
		return
	}
	// Double submit: the cookie set by this link's page, and the same value
	// in the form. Another site can make a browser post, never read the
	// cookie to fill the field in; SameSite=Strict keeps it from even
	// being sent. Checked before anything is read, and nothing is written.
	cookie, err := r.Cookie(csrfCookie)
	field := r.PostForm.Get("csrf")
	if err != nil || cookie.Value == "" || field == "" || subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(field)) != 1 {
		p.render(w, http.StatusForbidden, t, view{Title: t.Forbidden, Message: t.ForbiddenText})
		return
	}
	token, name := r.PathValue("token"), r.PostForm.Get("signerName")
	again := func(status int, problem string) { // the form again, saying what is wrong
		pg, err := p.records.OpenLinkDraft(r.Context(), token)
		switch {
		case err != nil:
			p.fail(w, r, t, err)
		case pg.State != records.LinkOpen:
			p.closed(w, t, pg)
		default:
			p.render(w, status, t, p.form(t, pg, token, field, name, problem))
		}
	}
	if r.PostForm.Get("consent") != "yes" {
		again(http.StatusBadRequest, t.NoConsent)
		return
	}
	drawn := r.PostForm.Get("drawing")
	pg, err := p.records.SignByLink(r.Context(), token, name, records.LinkEvidence{
		ClientAddress: ClientAddress(r, p.opts.TrustedProxies), UserAgent: r.UserAgent(), ConsentVersion: records.ConsentVersion,
		Document: r.PostForm.Get("document"), Drawing: drawn})
	var closed *records.LinkClosedError
	var invalid *apperr.Error
	switch {
	case errors.As(err, &closed):
		p.closed(w, t, pg)
	case errors.Is(err, records.ErrDocumentChanged):
		// Signed by another party meanwhile, say: the page again, with
		// the document as it now is, to be read and signed anew.
		p.render(w, http.StatusConflict, t, p.form(t, pg, token, field, name, t.Changed))
	case errors.As(err, &invalid) && invalid.Code == apperr.Invalid:
		problem := t.BadName
		if invalid.Field == "drawing" {
			problem = t.BadDrawing
		}
		again(http.StatusBadRequest, problem)
	case err != nil:
		p.fail(w, r, t, err)
	default:
		v := view{Title: t.Signed, Message: t.SignedText, Inventory: inventoryView(t, pg.Draft)}
		if d, err := drawing.Parse(drawn); err == nil && !d.Empty() {
			v.Drawn = d.SVGPath()
		}
		p.render(w, http.StatusOK, t, v)
	}
}

// begin sets the pages' headers, picks the language and takes one request
// from the address's rate; false when it is spent (answered 429).
func (p *Pages) begin(w http.ResponseWriter, r *http.Request) (texts, bool) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer") // the token is in the URL
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Language")
	t := language(r.Header.Get("Accept-Language"))
	if wait, ok := p.opts.Limiter.Allow(ClientAddress(r, p.opts.TrustedProxies)); !ok {
		h.Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		p.render(w, http.StatusTooManyRequests, t, view{Title: t.TooMany, Message: t.TooManyText})
		return t, false
	}
	return t, true
}

// closed answers a link that no longer signs: 410, saying why, no form.
func (p *Pages) closed(w http.ResponseWriter, t texts, pg *records.LinkPage) {
	msg := map[records.LinkState]string{records.LinkUsed: t.Used, records.LinkExpired: t.Expired,
		records.LinkCancelled: t.Cancelled, records.LinkOutdated: t.Outdated, records.LinkSigned: t.AlreadySigned}[pg.State]
	p.render(w, http.StatusGone, t, view{Title: t.Closed, Message: msg})
}

// fail answers an error: an unknown link is 404 in the same words whatever
// the token; a busy database 503; anything else 500, logged.
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, t texts, err error) {
	switch code := apperr.CodeOf(err); code {
	case apperr.NotFound:
		p.render(w, http.StatusNotFound, t, view{Title: t.NotFound, Message: t.NotFoundText})
	case apperr.Forbidden: // writes turned off (INVENTORY_WRITES=off): no link can sign now
		p.render(w, http.StatusServiceUnavailable, t, view{Title: t.Forbidden, Message: t.ReadOnly})
	case apperr.Unavailable, apperr.DeadlineExceeded, apperr.Cancelled, apperr.Conflict:
		apperr.SetRetryAfterFor(w.Header(), err)
		p.render(w, http.StatusServiceUnavailable, t, view{Title: t.Busy, Message: t.BusyText})
	default:
		if e, ok := apperr.Expired(r.Context()); ok {
			p.fail(w, r, t, e)
			return
		}
		p.opts.Log.ErrorContext(r.Context(), "signpage: the signature link's page failed", "err", err, "method", r.Method)
		p.render(w, http.StatusInternalServerError, t, view{Title: t.Busy, Message: t.BusyText})
	}
}

func (p *Pages) render(w http.ResponseWriter, status int, t texts, v view) {
	v.Lang, v.T = t.Lang, t
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		p.opts.Log.Error("signpage: rendering", "err", err)
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (p *Pages) form(t texts, pg *records.LinkPage, token, csrf, typed, problem string) view {
	party := map[string]string{"AGENT": t.Agent, "OWNER": t.Owner, "TENANT": t.Tenant}[string(pg.Request.Party)]
	f := &formView{CSRF: csrf, Hint: pg.Request.SignerName, Typed: typed, Error: problem,
		Consent: strings.ReplaceAll(t.Consent, "{party}", party), ConsentVersion: records.ConsentVersion}
	if pg.Draft != nil {
		// Relative to the page (/sign/{token}), whatever prefix a proxy
		// serves it under.
		f.Document, f.DraftURL = pg.Draft.SHA256, url.PathEscape(token)+"/draft.pdf"
	}
	return view{Title: t.Title, Message: strings.ReplaceAll(t.Intro, "{party}", party), Inventory: inventoryView(t, pg.Draft), Form: f}
}

// view is what the template shows.
type view struct {
	Lang, Title, Message string
	T                    texts
	Inventory            *invView
	Form                 *formView
	// Drawn is the signature just drawn, as an SVG path on the pad's grid.
	Drawn string
}

type formView struct {
	CSRF, Hint, Typed, Error, Consent, ConsentVersion string
	// Document is the SHA-256 of the draft the page offers, sent back
	// with the form: the signature is of that document or of none.
	Document, DraftURL string
}

type invView struct {
	ID, Address, Place, Kind, Made string
	Rooms                          []roomView
}

type roomView struct {
	Name, Description string
	Level             int
	Items             []itemView
}

type itemView struct {
	Name, Description, Material string
	Rating                      int
	ToRepair                    bool
	Photos                      []photoView
}

// photoView is a photo as the page shows it: its thumbnail, inline (the
// page loads nothing else), or why the PDF does not show it.
type photoView struct {
	Thumbnail template.URL
	NotShown  string
}

// inventoryView is the inventory as its draft PDF shows it (the draft's
// Document): the page and the document signed say the same.
func inventoryView(t texts, draft *records.Draft) *invView {
	if draft == nil {
		return nil
	}
	doc := draft.Document
	v := &invView{ID: doc.ID, Address: strings.TrimSpace(doc.PropertyCode + " " + doc.Address), Kind: doc.TypeName,
		Made: doc.CreatedAt.UTC().Format("2006-01-02")}
	var place []string
	for _, s := range []string{doc.Neighborhood, doc.City} {
		if s != "" {
			place = append(place, s)
		}
	}
	v.Place = strings.Join(place, ", ")
	for _, env := range doc.Environments {
		room := roomView{Name: env.Name, Description: env.Description, Level: env.Level}
		for _, it := range env.Items {
			item := itemView{Name: it.Name, Description: it.Description, Material: it.Material, Rating: it.Rating, ToRepair: it.ToRepair}
			for _, ph := range it.Photos {
				if ph.Thumbnail == nil {
					item.Photos = append(item.Photos, photoView{NotShown: ph.NotShown})
					continue
				}
				// Made by internal/thumbnail from a stored photo: an image
				// of a type the sniffer names, never markup.
				item.Photos = append(item.Photos, photoView{Thumbnail: template.URL("data:" + http.DetectContentType(ph.Thumbnail) +
					";base64," + base64.StdEncoding.EncodeToString(ph.Thumbnail))})
			}
			room.Items = append(room.Items, item)
		}
		v.Rooms = append(v.Rooms, room)
	}
	return v
}

// newCSRF is a fresh double-submit token: 256 random bits.
func newCSRF() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ClientAddress is the address a request came from: the connection's,
// unless that is a trusted proxy, whose X-Forwarded-For then names it (the
// rightmost address no trusted proxy added; whatever a client wrote to its
// left is its own say). A client that is not a proxy cannot choose its
// address by sending the header: its rate and its evidence stay its own.
func ClientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	// A zone (fe80::1%eth0) is the sender's own words, of any bytes: the
	// address is the evidence and the rate's bucket, its zone neither.
	addr = addr.Unmap().WithZone("")
	if !isTrusted(addr, trusted) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // past what a proxy wrote: keep the last one trusted
		}
		addr = hop.Unmap().WithZone("")
		if !isTrusted(addr, trusted) {
			break
		}
	}
	return addr.String()
}

func isTrusted(addr netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
