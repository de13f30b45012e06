package files

import (
	"context"
	"net/http"
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
		return public
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// PDFPath is where a signed inventory's PDF is downloaded (endpoint A2).
const PDFPath = "/inventory/download-pdf/"

// PDFURL is the download URL of a signed inventory's PDF; unsigned
// inventories have none.
func PDFURL(ctx context.Context, inventory string, signed bool) *string {
	if !signed {
		return nil
	}
	u := BaseURL(ctx) + PDFPath + inventory
	return &u
}
