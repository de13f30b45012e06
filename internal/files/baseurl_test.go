package files_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/propertyrecords/inventory/internal/files"
)

// Download URLs are signed and handed to people: a Host header that is not
// loopback or allowed cannot choose the host they name.
func TestDownloadURLsNameNoHostTheClientChose(t *testing.T) {
	local := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}
	allowed := []string{"inventory.example", "records.example:8443", "[2001:db8::1]"}
	for _, tt := range []struct {
		host, proto string
		want        string
	}{
		{"evil.example", "", "http://10.0.0.5:8080"},
		{"evil.example:8080", "https", "https://10.0.0.5:8080"}, // X-Forwarded-Proto is believed; the host is not
		{"localhost:8080", "", "http://localhost:8080"},
		{"LOCALHOST", "", "http://localhost"},
		{"127.0.0.1:9000", "", "http://127.0.0.1:9000"},
		{"127.8.9.10", "", "http://127.8.9.10"},
		{"[::1]:8080", "https", "https://[::1]:8080"},
		{"[::1]", "", "http://[::1]"},
		{"inventory.example", "", "http://inventory.example"},
		{"Inventory.Example:7000", "", "http://inventory.example:7000"}, // allowed at any port when listed without one
		{"records.example:8443", "", "http://records.example:8443"},
		{"records.example:9999", "", "http://10.0.0.5:8080"}, // listed with a port: that port only
		{"records.example", "", "http://10.0.0.5:8080"},
		{"[2001:db8::1]:443", "", "http://[2001:db8::1]:443"},
		// Hosts that would read back as another host in a URL, or are not one.
		{"127.0.0.1:80@evil.example", "", "http://10.0.0.5:8080"},
		{"localhost:@evil.example", "", "http://10.0.0.5:8080"},
		{"localhost/evil.example", "", "http://10.0.0.5:8080"},
		{"localhost#@evil.example", "", "http://10.0.0.5:8080"},
		{"127.0.0.1.evil.example", "", "http://10.0.0.5:8080"},
		{"localhost.evil.example", "", "http://10.0.0.5:8080"},
		{"inventory.example.evil.example", "", "http://10.0.0.5:8080"},
		{"::1", "", "http://10.0.0.5:8080"},
		{"[fe80::1%25eth0]", "", "http://10.0.0.5:8080"},
		{"localhost:", "", "http://10.0.0.5:8080"},
		{"", "", "http://10.0.0.5:8080"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/inventories", nil)
		r.Host = tt.host
		if tt.proto != "" {
			r.Header.Set("X-Forwarded-Proto", tt.proto)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
		if got := files.RequestBaseURL(r, "", allowed); got != tt.want {
			t.Errorf("Host %q: got %q, want %q", tt.host, got, tt.want)
		}
	}

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "evil.example"
	if got := files.RequestBaseURL(r, "https://inventory.example/", nil); got != "https://inventory.example" {
		t.Errorf("public URL set: got %q, want it, whatever the Host", got)
	}
	if got := files.RequestBaseURL(r, "", nil); got != "" {
		t.Errorf("no local address known: got %q, want relative URLs", got)
	}
	r.Host = "localhost:8443"
	r.TLS = &tls.ConnectionState{}
	if got := files.RequestBaseURL(r, "", nil); got != "https://localhost:8443" {
		t.Errorf("TLS: got %q, want https", got)
	}
}
