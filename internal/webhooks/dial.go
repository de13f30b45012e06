package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Resolver looks up a host's addresses (net.DefaultResolver; tests give
// answers of their own).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrRefusedAddress is the error of a delivery to an address the service
// does not connect to (server-side request forgery: its own network, the
// cloud's metadata).
var ErrRefusedAddress = errors.New("webhooks: refused address")

// cgnat is the carrier-grade NAT range: a provider's internal network.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// refusal names the class of ip when a delivery may not connect to it,
// "" when it may. Link-local addresses (the cloud's metadata at
// 169.254.169.254), multicast and unspecified ones are refused always;
// loopback, private, unique-local and carrier-grade NAT ones unless
// allowPrivate (INVENTORY_WEBHOOKS_ALLOW_PRIVATE=on: on-premises receivers,
// tests).
func refusal(ip netip.Addr, allowPrivate bool) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast"
	case allowPrivate:
		return ""
	case ip.IsLoopback():
		return "loopback"
	case ip.Is6() && ip.IsPrivate():
		return "unique-local"
	case ip.IsPrivate() || cgnat.Contains(ip) || (ip.Is4() && ip.As4()[0] == 0):
		return "private"
	}
	return ""
}

// dialer connects a delivery only to addresses it checked: it resolves the
// host at each connection, refuses it when any of its addresses is
// refused, and dials the checked address itself (not the name, which
// could resolve otherwise a moment later); its Control checks the
// address the socket connects to once more.
type dialer struct {
	resolver     Resolver
	allowPrivate bool
	net          net.Dialer
}

func newDialer(resolver Resolver, allowPrivate bool) *dialer {
	d := &dialer{resolver: resolver, allowPrivate: allowPrivate}
	d.net = net.Dialer{Timeout: deliveryTimeout, Control: d.control}
	return d
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("webhooks: resolving %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("webhooks: %s has no address", host)
	}
	for _, ip := range ips {
		if class := refusal(ip, d.allowPrivate); class != "" {
			return nil, fmt.Errorf("%w: %s resolves to %s, a %s address", ErrRefusedAddress, host, ip, class)
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := d.net.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control refuses a socket about to connect to a refused address, whatever
// chose it.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	if class := refusal(ap.Addr(), d.allowPrivate); class != "" {
		return fmt.Errorf("%w: %s is a %s address", ErrRefusedAddress, ap.Addr(), class)
	}
	return nil
}

// deliveryTimeout bounds an attempt: connection, request and the answer's
// read.
const deliveryTimeout = 10 * time.Second

// newHTTPClient is the deliveries' client: through dialer only, no proxy
// (the environment's would connect for it), redirects not followed (the
// 3xx is the answer: a redirect could point anywhere), 10 s in all.
func newHTTPClient(d *dialer) *http.Client {
	return &http.Client{
		Timeout: deliveryTimeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   deliveryTimeout,
			ResponseHeaderTimeout: deliveryTimeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// checkURL refuses an endpoint's URL the service would not deliver to:
// not absolute, http without allowPrivate, credentials in it, a literal
// address refused. A name's addresses are checked at each delivery.
func checkURL(raw string, allowPrivate bool) error {
	const field = "url"
	if len(raw) > maxURLBytes {
		return apperr.InvalidField(field, "at most %d bytes", maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return apperr.InvalidField(field, "an absolute URL, https://host/path")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return apperr.InvalidField(field, "https is required (http only with INVENTORY_WEBHOOKS_ALLOW_PRIVATE=on)")
	default:
		return apperr.InvalidField(field, "https, not %q", u.Scheme)
	}
	if u.User != nil {
		return apperr.InvalidField(field, "no credentials in the URL: verify the signature instead")
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		if class := refusal(ip, allowPrivate); class != "" {
			return apperr.InvalidField(field, "%s is a %s address, which the service does not deliver to", ip, class)
		}
	}
	return nil
}
