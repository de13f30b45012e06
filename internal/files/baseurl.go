package files

import (
	"context"
	"net/http"
	"strings"
)

type baseURLKey struct{}

// WithBaseURL records the scheme and host that URLs given to the client of
// this request start with.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, base)
}

// BaseURL is the base URL recorded in ctx, or "" (URLs relative to the server).
func BaseURL(ctx context.Context) string {
	base, _ := ctx.Value(baseURLKey{}).(string)
	return base
}

// RequestBaseURL is the base URL a client used to reach this server: the
// configured public URL when set, else the request's scheme and host.
func RequestBaseURL(r *http.Request, public string) string {
	if public != "" {
		return strings.TrimSuffix(public, "/")
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// PDFPath is where a signed inventory's PDF is downloaded (endpoint A2).
const PDFPath = "/inventory/download-pdf/"

// PDFURL is the download URL of an inventory's signed PDF, given only when
// that PDF is stored (its digest is recorded): unsigned inventories have none,
// and a URL that could only answer 404 would mislead.
func PDFURL(ctx context.Context, inventory string, stored bool) *string {
	if !stored {
		return nil
	}
	u := BaseURL(ctx) + PDFPath + inventory
	return &u
}
