package signpage

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestClientAddress: X-Forwarded-For names the signer only behind a trusted
// proxy, and then the rightmost hop no trusted proxy added; anyone else's
// header is ignored, so a client cannot choose its rate bucket or evidence.
func TestClientAddress(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, c := range []struct {
		remote, xff, want string
	}{
		{"203.0.113.7:5000", "", "203.0.113.7"},
		{"203.0.113.7:5000", "198.51.100.1", "203.0.113.7"}, // not a proxy: its header is its own say
		{"10.1.2.3:5000", "fe80::1%\xff\xfe", "fe80::1"},    // a zone is the sender's words, of any bytes: dropped
		{"[fe80::1%eth0]:5000", "", "fe80::1"},
		{"10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},                    // a proxy's
		{"10.1.2.3:5000", "1.1.1.1, 198.51.100.1, 10.9.9.9", "198.51.100.1"}, // the rightmost not trusted
		{"10.1.2.3:5000", "garbage, 198.51.100.1", "198.51.100.1"},
		{"10.1.2.3:5000", "198.51.100.1, garbage", "10.1.2.3"}, // the proxy's own hop is malformed: the proxy
		{"10.1.2.3:5000", "", "10.1.2.3"},
		{"[::1]:5000", "2001:db8::5", "2001:db8::5"},
		{"[::ffff:203.0.113.7]:5000", "", "203.0.113.7"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/sign/x", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ClientAddress(r, trusted); got != c.want {
			t.Errorf("%s with X-Forwarded-For %q: %s; want %s", c.remote, c.xff, got, c.want)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/sign/x", nil)
	r.RemoteAddr, r.Header["X-Forwarded-For"] = "10.1.2.3:1", []string{"198.51.100.1"}
	if got := ClientAddress(r, nil); got != "10.1.2.3" {
		t.Errorf("no proxy trusted: %s; want the connection's address", got)
	}
}

func TestLanguage(t *testing.T) {
	for header, want := range map[string]string{
		"":                        "es",
		"en":                      "en",
		"en-US,en;q=0.9":          "en",
		"es-CO,es;q=0.9,en;q=0.8": "es",
		"en;q=0.5,es;q=0.8":       "es",
		"fr-FR,en;q=0.5":          "en",
		"de":                      "es",
		"en;q=0":                  "es",
		"EN-gb":                   "en",
		"en;q=garbage, es;q=0.2":  "en",
		",,;;q=,en":               "en",
	} {
		if got := language(header).Lang; got != want {
			t.Errorf("Accept-Language %q: %s; want %s", header, got, want)
		}
	}
}
