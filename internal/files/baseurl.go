package files

import (
	"context"
	"net"
	"net/http"
	"net/netip"
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

// RequestBaseURL is the base URL download URLs given to this request's
// client start with: the configured public URL when set; else the request's
// scheme and Host header, but only when that Host is a loopback one
// (localhost, 127.0.0.0/8, ::1) or one of allowedHosts.
//
// Any client can send any Host, and these URLs are signed and handed to
// people who follow them: built from a forged Host they would send a
// download (and the signature in it) to a server of the sender's choosing.
// So another Host is not believed, and the URLs name the address the
// connection arrived on instead: a client that reached the server directly
// can follow them, and nothing the client sent chooses the host. Behind a
// proxy that address is an internal one: set the public URL, or list the
// proxy's names in allowedHosts. With no local address known (a handler
// called without a server), URLs are relative ("").
//
// allowedHosts are lower-cased host names, optionally with a port: without
// one a name is allowed at any port.
//
// X-Forwarded-Proto: https is believed as is, from any client, to choose
// https behind a TLS-terminating proxy. It can only switch the scheme of the
// URLs the client itself gets (to a host chosen as above), so believing it
// costs nothing that the client could not do to itself.
func RequestBaseURL(r *http.Request, public string, allowedHosts []string) string {
	if public != "" {
		return strings.TrimSuffix(public, "/")
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	if hostAllowed(r.Host, allowedHosts) {
		return scheme + "://" + strings.ToLower(r.Host)
	}
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return scheme + "://" + local.String()
	}
	return ""
}

// hostAllowed reports whether host (a Host header: a name or an IP literal,
// with an optional port) is a loopback host or one of allowed.
func hostAllowed(host string, allowed []string) bool {
	name, port, ok := splitHost(host)
	if !ok {
		return false
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	for _, a := range allowed {
		aName, aPort, ok := splitHost(a)
		if ok && strings.EqualFold(name, aName) && (aPort == "" || aPort == port) {
			return true
		}
	}
	return false
}

// splitHost splits a Host value into its name and port, refusing anything
// that would not read back as that host in a URL: the port must be digits
// (else "127.0.0.1:80@evil.example" would pass for 127.0.0.1 and make a URL
// whose host is evil.example), and the name may not hold URL delimiters.
func splitHost(host string) (name, port string, ok bool) {
	name = host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		if strings.HasPrefix(host, "[") || strings.Count(host, ":") == 1 {
			name, port = host[:i], host[i+1:]
			if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
				return "", "", false
			}
		}
	}
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		// An IPv6 literal, the one place a name holds colons.
		if ip, err := netip.ParseAddr(name[1 : len(name)-1]); err == nil && ip.Is6() && ip.Zone() == "" {
			return name[1 : len(name)-1], port, true
		}
		return "", "", false
	}
	if name == "" || strings.ContainsAny(name, "/?#@[]:% \\") {
		return "", "", false
	}
	return name, port, true
}

// PDFPath is where a signed inventory's PDF is downloaded (endpoint A2).
const PDFPath = "/inventory/download-pdf/"

// PDFURL is the download URL of an inventory's signed PDF: every signed
// inventory has one (A2 renders a PDF never stored from the record), and
// unsigned ones none.
func PDFURL(ctx context.Context, inventory string, signed bool) *string {
	if !signed {
		return nil
	}
	u := BaseURL(ctx) + PDFPath + inventory
	return &u
}
