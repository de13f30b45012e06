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

var page = template.Must(template.New("ide").Parse(pageHTML))

// contentSecurityPolicy lets the browser load scripts, styles and data only
// from this server (GraphiQL's fonts are inline data: URLs). page.html starts
// GraphiQL with an inline script, hence script-src's 'unsafe-inline'.
// frame-ancestors 'none' forbids framing the page: the IDE sends queries with
// the company header it holds, and a page of another site that framed it
// could get a user to click through one (clickjacking).
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Page serves the IDE, opened on ExampleQuery with the X-Company-Id header of
// company already filled in; or, when the server takes credentials
// (withCredential), an Authorization header for the user to paste a key or
// token into. Its second tab compares two inventories: pair, asked at the
// first page served, names two of company's; placeholders stand in when it
// finds none.
func Page(endpoint string, company uuid.UUID, withCredential bool, pair func(context.Context) (from, to uuid.UUID, ok bool)) http.Handler {
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
		vars := map[string]string{"from": "<an inventory id>", "to": "<a later inventory id of the same property>"}
		if from, to, ok := pair(ctx); ok {
			vars = map[string]string{"from": from.String(), "to": to.String()}
		}
		variables, _ := json.MarshalIndent(vars, "", "  ")
		var buf bytes.Buffer
		err := page.Execute(&buf, map[string]string{"Endpoint": endpoint, "Query": ExampleQuery, "Headers": string(headers),
			"ComparisonQuery": ComparisonQuery, "ComparisonVariables": string(variables)})
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
