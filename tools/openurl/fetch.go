package openurl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/switchyardhq/switchyard/tools"
)

// Resolver looks up the addresses of a host name. *net.Resolver
// satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ResolverFunc adapts a function to Resolver, so that a test can make a
// name resolve to any address.
type ResolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// LookupNetIP calls f.
func (f ResolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// page is a fetched response body, cut to the size bound.
type page struct {
	url         *url.URL // after redirects
	mediaType   string   // lower case, without parameters
	contentType string   // as sent, for the charset
	body        []byte
	cut         bool // the body was longer than the bound
}

// fetcher performs guarded GET requests. It is safe for concurrent use.
type fetcher struct {
	guard        Guard
	resolver     Resolver
	maxBytes     int64
	maxRedirects int
	userAgent    string
	client       *http.Client

	// dial connects to an address the guard has passed. Tests replace
	// it to see which addresses would be dialled.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

func newFetcher(o Options) *fetcher {
	f := &fetcher{
		guard:        Guard{Allow: o.Allow, Ports: o.Ports},
		resolver:     o.Resolver,
		maxBytes:     o.MaxBytes,
		maxRedirects: o.MaxRedirects,
		userAgent:    o.UserAgent,
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	// The Control hook sees the address the socket really connects to,
	// so it holds even if something between resolution and connect
	// chose another address.
	d := &net.Dialer{Control: f.guard.control}
	f.dial = d.DialContext
	transport := &http.Transport{
		// Never a proxy from the environment: a proxy would make the
		// connection, out of the guard's sight.
		Proxy:                  nil,
		DialContext:            f.dialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	f.client = &http.Client{
		Transport:     transport,
		CheckRedirect: f.checkRedirect,
	}
	return f
}

// control is a net.Dialer Control function that applies the guard.
func (g Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return tools.Failf("refused: the address %q is not valid", address)
	}
	return g.Allowed(ap)
}

// dialContext resolves the host itself so that every address is checked
// before it is dialled, and the check and the connection use the same
// address: there is no second lookup a rebinding DNS server could answer
// differently.
func (f *fetcher) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, tools.Failf("refused: the address %q is not valid", address)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, tools.Failf("refused: the port %q is not valid", portText)
	}
	addrs, err := f.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var allowed []netip.AddrPort
	var refusal error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(canonical(a), uint16(port))
		if err := f.guard.Allowed(ap); err != nil {
			if refusal == nil {
				refusal = err
			}
			continue
		}
		allowed = append(allowed, ap)
	}
	if len(allowed) == 0 {
		if refusal == nil {
			refusal = tools.Failf("the host %s has no address", host)
		}
		return nil, refusal
	}
	var lastErr error
	for i, ap := range allowed {
		conn, err := f.dialOne(ctx, network, ap, len(allowed)-i)
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// dialOne dials ap, leaving time for the remaining addresses the way
// net.Dialer shares its deadline among them.
func (f *fetcher) dialOne(ctx context.Context, network string, ap netip.AddrPort, remaining int) (net.Conn, error) {
	if deadline, ok := ctx.Deadline(); ok && remaining > 1 {
		share := time.Until(deadline) / time.Duration(remaining)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, share)
		defer cancel()
	}
	return f.dial(ctx, network, ap.String())
}

func (f *fetcher) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if numericHost(host) {
		return nil, tools.Failf("refused: the host %s is a number that is not a standard IP address", host)
	}
	addrs, err := f.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, &tools.CallError{Message: "the host " + host + " was not found", Err: err}
		}
		return nil, &tools.CallError{Message: "the host " + host + " could not be resolved", Err: err}
	}
	return addrs, nil
}

func (f *fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.maxRedirects {
		return tools.Failf("too many redirects (more than %d)", f.maxRedirects)
	}
	return checkParsed(req.URL, f.guard)
}

// acceptedTypes are the media types open_url reads.
var acceptedTypes = map[string]bool{
	"text/html":             true,
	"application/xhtml+xml": true,
	"text/plain":            true,
}

// fetch GETs u and reads at most maxBytes of an HTML or text body.
// Failures are *tools.CallError, except the cancellation of ctx.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, tools.Failf("refused: this is not a valid URL")
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return page{}, fetchError(ctx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return page{}, tools.Failf("HTTP %d from the site", resp.StatusCode)
	}
	p := page{url: resp.Request.URL, contentType: resp.Header.Get("Content-Type")}
	p.mediaType = mediaType(p.contentType)
	if p.mediaType != "" && !acceptedTypes[p.mediaType] {
		return page{}, tools.Failf("the page is not HTML or text (%s)", p.mediaType)
	}
	p.body, err = io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return page{}, fetchError(ctx, err)
	}
	if int64(len(p.body)) > f.maxBytes {
		p.body, p.cut = p.body[:f.maxBytes], true
	}
	if p.mediaType == "" {
		p.contentType = http.DetectContentType(p.body)
		p.mediaType = mediaType(p.contentType)
		if !acceptedTypes[p.mediaType] {
			return page{}, tools.Failf("the page is not HTML or text (%s)", p.mediaType)
		}
	}
	return p, nil
}

func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}

// fetchError turns a transport failure into a message for the model
// that names the category and nothing internal.
func fetchError(ctx context.Context, err error) error {
	var ce *tools.CallError
	if errors.As(err, &ce) {
		return ce
	}
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), errFetchTimeout) {
			return &tools.CallError{Message: "the page did not answer in time", Err: err}
		}
		return ctx.Err()
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return &tools.CallError{Message: "the page did not answer in time", Err: err}
	}
	if tlsFailure(err) {
		return &tools.CallError{Message: "the site's TLS certificate is not valid", Err: err}
	}
	return &tools.CallError{Message: "could not connect to the site", Err: err}
}

func tlsFailure(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		unknown   x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		recordErr tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &recordErr)
}

// errFetchTimeout is the cause of the fetch context when Options.Timeout
// runs out, told apart from the caller's own deadline.
var errFetchTimeout = errors.New("open_url time limit")
