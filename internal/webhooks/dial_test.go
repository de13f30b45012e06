package webhooks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// answers is a resolver with fixed answers, as a DNS server an attacker
// runs could give.
type answers map[string][]netip.Addr

func (a answers) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := a[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var addressClasses = []struct {
	class, ip string
	// allowedWithPrivate: INVENTORY_WEBHOOKS_ALLOW_PRIVATE=on lets it through.
	allowedWithPrivate bool
}{
	{"loopback", "127.0.0.1", true},
	{"loopback", "::1", true},
	{"private", "10.1.2.3", true},
	{"private", "172.16.0.1", true},
	{"private", "192.168.1.1", true},
	{"private", "100.64.0.1", true}, // carrier-grade NAT
	{"private", "0.1.2.3", true},
	{"unique-local", "fd00::1", true},
	{"link-local", "169.254.169.254", false}, // the cloud's metadata
	{"link-local", "fe80::1", false},
	{"multicast", "239.1.2.3", false},
	{"multicast", "ff05::1", false},
	{"multicast", "255.255.255.255", false},
	{"unspecified", "0.0.0.0", false},
	{"unspecified", "::", false},
	{"loopback", "::ffff:127.0.0.1", true}, // IPv4-mapped
}

// Each class of address is refused before any connection; the private
// ones pass only with allowPrivate, link-local, multicast and unspecified
// never; a public address passes.
func TestEachRefusedAddressClass(t *testing.T) {
	for _, c := range addressClasses {
		ip := netip.MustParseAddr(c.ip)
		if got := refusal(ip, false); got != c.class {
			t.Errorf("%s: %q; want %q", c.ip, got, c.class)
		}
		if got := refusal(ip, true); (got == "") != c.allowedWithPrivate {
			t.Errorf("%s with private allowed: %q", c.ip, got)
		}
	}
	for _, public := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "8.8.8.8"} {
		if got := refusal(netip.MustParseAddr(public), false); got != "" {
			t.Errorf("%s: refused as %q", public, got)
		}
	}
}

// A delivery to a name that resolves to a refused address never
// connects: the dialer refuses it, whatever the URL said, and a name with
// one refused address among public ones is refused too.
func TestADeliveryToARefusedAddressDoesNotConnect(t *testing.T) {
	res := answers{"mixed.example": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.1")}}
	for _, c := range addressClasses {
		res[c.class+"-"+strings.NewReplacer(".", "-", ":", "-").Replace(c.ip)+".example"] = []netip.Addr{netip.MustParseAddr(c.ip)}
	}
	client := newHTTPClient(newDialer(res, false))
	for host := range res {
		_, err := client.Post("https://"+host+"/hook", "application/json", strings.NewReader("{}"))
		if !errors.Is(err, ErrRefusedAddress) {
			t.Errorf("%s: %v; want refused", host, err)
		}
	}
}

// With private receivers allowed, a receiver on loopback is reached (the
// tests' own), and link-local is still refused; the address dialled is
// the one checked, not the name resolved again.
func TestPrivateReceiversWhenAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	res := answers{"receiver.internal": {netip.MustParseAddr("127.0.0.1")}, "metadata.internal": {netip.MustParseAddr("169.254.169.254")}}
	client := newHTTPClient(newDialer(res, true))
	resp, err := client.Get("http://receiver.internal:" + port + "/")
	if err != nil {
		t.Fatalf("loopback with private allowed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("status %d", resp.StatusCode)
	}
	if _, err := client.Get("http://metadata.internal/latest/meta-data/"); !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("link-local with private allowed: %v; want refused", err)
	}
	if _, err := newHTTPClient(newDialer(res, false)).Get("http://receiver.internal:" + port + "/"); !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("loopback without private allowed: %v; want refused", err)
	}
}

// Redirects are not followed: the 3xx is the answer.
func TestRedirectsAreNotFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	defer srv.Close()
	resp, err := newHTTPClient(newDialer(answers{}, true)).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status %d; want the 302 itself", resp.StatusCode)
	}
}

// An endpoint's URL: https unless private receivers are allowed, no
// credentials, no literal refused address.
func TestEndpointURLs(t *testing.T) {
	for _, c := range []struct {
		url          string
		allowPrivate bool
		ok           bool
	}{
		{"https://receiver.example/hook", false, true},
		{"http://receiver.example/hook", false, false},
		{"http://receiver.example/hook", true, true},
		{"ftp://receiver.example/hook", true, false},
		{"https://user:pw@receiver.example/hook", false, false},
		{"https://10.0.0.1/hook", false, false},
		{"https://10.0.0.1/hook", true, true},
		{"https://169.254.169.254/", true, false},
		{"https://[fe80::1]/", true, false},
		{"/hook", false, false},
		{"https://" + strings.Repeat("a", 2100) + ".example/", false, false},
	} {
		err := checkURL(c.url, c.allowPrivate)
		if (err == nil) != c.ok {
			t.Errorf("%.60s (private %v): %v", c.url, c.allowPrivate, err)
		}
		if e, isApp := errors.AsType[*apperr.Error](err); err != nil && (!isApp || e.Field != "url") {
			t.Errorf("%.60s: %v; want INVALID_ARGUMENT on url", c.url, err)
		}
	}
}

// changing answers a name's lookups in turn, as a DNS server an attacker
// runs does to pass a check with one address and connect to another
// (DNS rebinding); it counts the lookups.
type changing struct {
	mu      sync.Mutex
	answers []netip.Addr
	asked   int
}

func (c *changing) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ip := c.answers[min(c.asked, len(c.answers)-1)]
	c.asked++
	return []netip.Addr{ip}, nil
}

// A name whose DNS answer changes between the check and the connection
// gets nowhere: each connection looks the name up once, checks that
// answer and connects to it, so the receiver reached is the one checked,
// and the next connection, told the cloud's metadata address, is refused
// without connecting.
func TestADNSAnswerThatChangesIsNotFollowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	dns := &changing{answers: []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")}}
	client := newHTTPClient(newDialer(dns, true))
	client.Transport.(*http.Transport).DisableKeepAlives = true // each delivery its own connection
	resp, err := client.Post("http://rebinding.example:"+port+"/hook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("first delivery, told 127.0.0.1: %v", err)
	}
	resp.Body.Close()
	if dns.asked != 1 || hits.Load() != 1 {
		t.Errorf("after one connection: %d lookups, %d requests received; want 1 and 1 (the address checked is the one dialled)", dns.asked, hits.Load())
	}
	_, err = client.Post("http://rebinding.example:"+port+"/hook", "application/json", strings.NewReader("{}"))
	if !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("second delivery, told 169.254.169.254: %v; want refused", err)
	}
	if dns.asked != 2 || hits.Load() != 1 {
		t.Errorf("after the refused one: %d lookups, %d requests received; want 2 and 1", dns.asked, hits.Load())
	}
}
