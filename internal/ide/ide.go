// Package ide serves the GraphiQL IDE from assets built into the binary: the
// page loads nothing from outside the server, so it works with no internet.
package ide

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

//go:embed assets/*.gz
var assets embed.FS

//go:embed page.html
var pageHTML string

// ExampleQuery is the nested query the IDE opens with.
//
//go:embed example.graphql
var ExampleQuery string

// ComparisonQuery is the IDE's second tab: two inventories of a property
// compared.
//
//go:embed comparison.graphql
var ComparisonQuery string

// CaptureQuery is the IDE's third tab: an inventory made and signed.
//
//go:embed capture.graphql
var CaptureQuery string

// LiveQuery is the IDE's tab beside the capture tab: the property's writes
// as they commit.
//
//go:embed live.graphql
var LiveQuery string

// signingPanel is the IDE's Signing links panel (a GraphiQL plugin): the
// capture tab's parties required, who has signed, and a party's link to
// sign from. Inlined in the page, as its start script is, so that the
// Content-Security-Policy needs nothing new.
//
//go:embed signing.js
var signingPanel string

// livePanel is the IDE's Live events panel (a GraphiQL plugin): a
// property's events, every one received, followed by a subscription of its
// own while the tabs run. Inlined in the page as the Signing links panel is.
//
//go:embed live.js
var livePanel string

// LiveVariables are the live tab's variables: the capture tab's property.
func LiveVariables(ex Examples) map[string]any {
	property := "<a property id>"
	if ex.Property != uuid.Nil {
		property = ex.Property.String()
	}
	return map[string]any{"propertyId": property}
}

// Examples are the records the IDE's example tabs open on; a zero id has no
// record, and its tab opens on a placeholder.
type Examples struct {
	// From and To are two inventories of one property, for the comparison.
	From, To uuid.UUID
	// Property is a property of the company, for the inventory the
	// capture tab makes; Materials are catalogue materials by name, for
	// its items (a floor of ceramic, a window of glass), and Material any
	// one, for an item whose own is not in the catalogue.
	Property, Material uuid.UUID
	Materials          map[string]uuid.UUID
}

// captureInventory is the id of the inventory the capture tab makes: fixed,
// so that running the tab again (any visitor's) answers the same inventory
// rather than making another.
var captureInventory = uuid.MustParse("5d1c1a52-0c8f-4f43-9a55-2a8e7b1f1de0")

// Parties are the signature parties, in the order the API lists them.
var Parties = []string{"AGENT", "OWNER", "TENANT"}

// DefaultRequired is the capture tab's requiredSignatures until the user
// ticks others: the API's default.
var DefaultRequired = []string{"AGENT", "OWNER"}

// CaptureInventoryFor is the capture tab's inventory id for a choice of
// requiredSignatures. The same content sent again under an id answers the
// inventory made, other content is CONFLICT: with one id for every choice,
// the first visitor's choice would refuse everyone else's on the shared
// demo database. So each choice has its own fixed id (the default's is
// captureInventory, the id the tab always had), and running the tab again
// with a choice answers that choice's inventory.
func CaptureInventoryFor(required []string) uuid.UUID {
	mask := 0
	for _, p := range required {
		for i, q := range Parties {
			if p == q {
				mask |= 1 << i
			}
		}
	}
	id := captureInventory
	if mask != 3 { // AGENT and OWNER: the default keeps the tab's first id
		id[15] |= byte(mask)
	}
	return id
}

// captureInventories are CaptureInventoryFor's ids by choice, keyed by the
// parties joined with commas in the API's order (AGENT,OWNER,TENANT): the
// Signing links panel switches the tab's id with its boxes.
func captureInventories() map[string]string {
	ids := map[string]string{}
	for mask := 1; mask < 1<<len(Parties); mask++ {
		var chosen []string
		for i, p := range Parties {
			if mask&(1<<i) != 0 {
				chosen = append(chosen, p)
			}
		}
		ids[strings.Join(chosen, ",")] = CaptureInventoryFor(chosen).String()
	}
	return ids
}

// CaptureVariables are the capture tab's variables for these examples: the
// inventory to make (required by DefaultRequired), and the party and name
// a signing link is requested for (the tenant's, whom the default leaves
// out: tick TENANT in the panel to require them).
// The materials of the capture tab's items, by their catalogue names.
const (
	FloorMaterial  = "Cerámica"
	WindowMaterial = "Vidrio"
)

func CaptureVariables(ex Examples) map[string]any {
	property := "<a property id>"
	if ex.Property != uuid.Nil {
		property = ex.Property.String()
	}
	// Each item of the material it is made of, where the catalogue has it.
	material := func(name string) string {
		if id, ok := ex.Materials[name]; ok {
			return id.String()
		}
		if ex.Material != uuid.Nil {
			return ex.Material.String()
		}
		return "<a material id>"
	}
	id := CaptureInventoryFor(DefaultRequired).String()
	return map[string]any{"id": id, "input": map[string]any{
		"id": id, "propertyId": property, "inventoryType": "COLOCACION",
		"rentalPrice": "1800000", "currency": "COP",
		"requiredSignatures": append([]string(nil), DefaultRequired...),
		"environments": []any{map[string]any{"name": "Sala", "level": 1, "items": []any{
			map[string]any{"name": "Piso", "materialId": material(FloorMaterial), "rating": 5, "toRepair": false, "description": "Sin novedad", "order": 0},
			map[string]any{"name": "Ventana", "materialId": material(WindowMaterial), "rating": 2, "toRepair": true, "description": "Vidrio rayado", "order": 1},
		}}},
	}, "party": "TENANT", "signerName": "Marta Ruiz"}
}

// liveConfig is what the Live events panel is started with: the live tab's
// document (the server's copy), whose subscription it holds, and the
// capture tab's property, which it follows unless the tab names another.
func liveConfig(ex Examples) map[string]any {
	return map[string]any{"document": LiveQuery, "propertyId": LiveVariables(ex)["propertyId"]}
}

var page = template.Must(template.New("ide").Parse(pageHTML))

// signingConfig is what the Signing links panel is started with: where it
// sends its requests, the capture tab's document whose operations it runs
// (the server's copy: the editor's text may have been changed), and the
// capture tab's inventory id for each choice of parties required.
func signingConfig(endpoint string) map[string]any {
	return map[string]any{"endpoint": endpoint, "document": CaptureQuery, "ids": captureInventories(),
		"parties": Parties, "defaultRequired": DefaultRequired}
}

// contentSecurityPolicy lets the browser load scripts, styles and data only
// from this server (GraphiQL's fonts are inline data: URLs). page.html starts
// GraphiQL, and defines the Signing links and Live events panels, with
// inline scripts, hence script-src's 'unsafe-inline'; the panels' requests
// and subscriptions go to the endpoint (connect-src 'self', which takes
// this server's WebSocket too), and the signing link opens the signing
// page by navigation, which the policy does not govern.
// frame-ancestors 'none' forbids framing the page: the IDE sends queries with
// the company header it holds, and a page of another site that framed it
// could get a user to click through one (clickjacking).
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Page serves the IDE, opened on ExampleQuery with the X-Company-Id header of
// company already filled in; or, when the server takes credentials
// (withCredential), an Authorization header for the user to paste a key or
// token into. Its second tab compares two inventories, its third follows a
// property's writes live, and its fourth makes and signs one, with the
// Signing links panel beside it for the parties who sign from a link and
// the Live events panel listing the writes while the tabs run:
// examples, asked at the first page served, names the records they open on;
// placeholders stand in for those it finds none of.
func Page(endpoint string, company uuid.UUID, withCredential bool, examples func(context.Context) Examples) http.Handler {
	initial := map[string]string{"X-Company-Id": company.String()}
	if company == uuid.Nil {
		initial["X-Company-Id"] = "<your company's UUID>"
	}
	if withCredential {
		initial = map[string]string{"Authorization": "Bearer <paste your API key or token>"}
	}
	headers, _ := json.MarshalIndent(initial, "", "  ")
	var once sync.Once
	var body []byte
	render := func(ctx context.Context) {
		ex := examples(ctx)
		vars := map[string]string{"from": "<an inventory id>", "to": "<a later inventory id of the same property>"}
		if ex.From != uuid.Nil && ex.To != uuid.Nil {
			vars = map[string]string{"from": ex.From.String(), "to": ex.To.String()}
		}
		variables, _ := json.MarshalIndent(vars, "", "  ")
		capture, _ := json.MarshalIndent(CaptureVariables(ex), "", "  ")
		liveVariables, _ := json.MarshalIndent(LiveVariables(ex), "", "  ")
		var buf bytes.Buffer
		err := page.Execute(&buf, map[string]any{"Endpoint": endpoint, "Query": ExampleQuery, "Headers": string(headers),
			"ComparisonQuery": ComparisonQuery, "ComparisonVariables": string(variables),
			"CaptureQuery": CaptureQuery, "CaptureVariables": string(capture),
			"LiveQuery": LiveQuery, "LiveVariables": string(liveVariables),
			"SigningPanel": template.JS(signingPanel), "SigningConfig": signingConfig(endpoint),
			"LivePanel": template.JS(livePanel), "LiveConfig": liveConfig(ex)})
		if err != nil {
			panic(err) // the template and its data are fixed at build time
		}
		body = buf.Bytes()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			// Not the first visitor's to cancel: the page it renders is everyone's.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
			defer cancel()
			render(ctx)
		})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		// For browsers that predate frame-ancestors.
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// The page names the company the IDE opens with.
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(body)
	})
}

// Assets serves the IDE's scripts and styles under any prefix, gzipped as
// stored when the client accepts it (every browser does). They are the same
// public files for everyone, so any cache may keep them for a day.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.URL.Path)
		data, err := assets.ReadFile("assets/" + name + ".gz")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		contentType := "text/javascript; charset=utf-8"
		if strings.HasSuffix(name, ".css") {
			contentType = "text/css; charset=utf-8"
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Add("Vary", "Accept-Encoding")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(data)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			http.Error(w, "corrupt asset", http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(w, zr)
	})
}
