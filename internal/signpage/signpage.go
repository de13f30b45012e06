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
	"strconv"
	"strings"
	"time"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/records"
)

// Path starts the pages' paths; the token follows it.
const Path = "/sign/"

// ContentSecurityPolicy is the pages': nothing loads but the page itself
// and its inline style, no script runs, the form posts only here, and no
// other site frames it (a signature clicked through a frame is not one).
const ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// DefaultRatePerMinute is the requests an address may send to the pages a
// minute, in a burst as large: a person reads, types and posts a few
// times; a script trying tokens is stopped (tokens are 256 bits: the limit
// spares the database, not the secret).
const DefaultRatePerMinute = 30

// csrfCookie holds the form's double-submit token.
const csrfCookie = "sign_csrf"

// maxForm bounds what a POST may send: a name, a checkbox and a token.
const maxForm = 8 << 10

//go:embed page.html
var pageHTML string

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
	pg, err := p.records.OpenLink(r.Context(), r.PathValue("token"))
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
	p.render(w, http.StatusOK, t, p.form(t, pg, csrf, "", ""))
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
	if r.PostForm.Get("consent") != "yes" {
		pg, err := p.records.OpenLink(r.Context(), token)
		switch {
		case err != nil:
			p.fail(w, r, t, err)
		case pg.State != records.LinkOpen:
			p.closed(w, t, pg)
		default:
			p.render(w, http.StatusBadRequest, t, p.form(t, pg, field, name, t.NoConsent))
		}
		return
	}
	pg, err := p.records.SignByLink(r.Context(), token, name, records.LinkEvidence{
		ClientAddress: ClientAddress(r, p.opts.TrustedProxies), UserAgent: r.UserAgent(), ConsentVersion: records.ConsentVersion})
	var closed *records.LinkClosedError
	switch {
	case errors.As(err, &closed):
		p.closed(w, t, pg)
	case err != nil && pg != nil && apperr.CodeOf(err) == apperr.Invalid:
		p.render(w, http.StatusBadRequest, t, p.form(t, pg, field, name, t.BadName))
	case err != nil:
		p.fail(w, r, t, err)
	default:
		v := view{Title: t.Signed, Message: t.SignedText, Inventory: inventoryView(t, pg.Inventory)}
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

func (p *Pages) form(t texts, pg *records.LinkPage, csrf, typed, problem string) view {
	party := map[string]string{"AGENT": t.Agent, "OWNER": t.Owner, "TENANT": t.Tenant}[string(pg.Request.Party)]
	return view{Title: t.Title, Message: strings.ReplaceAll(t.Intro, "{party}", party), Inventory: inventoryView(t, pg.Inventory),
		Form: &formView{CSRF: csrf, Hint: pg.Request.SignerName, Typed: typed, Error: problem,
			Consent: strings.ReplaceAll(t.Consent, "{party}", party), ConsentVersion: records.ConsentVersion}}
}

// view is what the template shows.
type view struct {
	Lang, Title, Message string
	T                    texts
	Inventory            *invView
	Form                 *formView
}

type formView struct {
	CSRF, Hint, Typed, Error, Consent, ConsentVersion string
}

type invView struct {
	Address, Place, Kind, Made string
	Version                    int
	Rooms                      []roomView
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
}

func inventoryView(t texts, inv *ent.Inventory) *invView {
	if inv == nil {
		return nil
	}
	v := &invView{Kind: inv.InventoryType.Name(), Made: inv.CreatedAt.UTC().Format("2006-01-02"), Version: inv.Version}
	if prop := inv.Edges.Property; prop != nil {
		v.Address = prop.Address
		var place []string
		for _, s := range []string{prop.Neighborhood, prop.City} {
			if s != "" {
				place = append(place, s)
			}
		}
		v.Place = strings.Join(place, ", ")
	}
	for _, env := range inv.Edges.Environments {
		room := roomView{Name: env.Name, Description: env.Description, Level: env.Level}
		for _, it := range env.Edges.Items {
			item := itemView{Name: it.Name, Description: it.Description, Rating: it.Rating, ToRepair: it.ToRepair}
			if m := it.Edges.Material; m != nil {
				item.Material = m.Name
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
	addr = addr.Unmap()
	if !isTrusted(addr, trusted) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // past what a proxy wrote: keep the last one trusted
		}
		addr = hop.Unmap()
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
