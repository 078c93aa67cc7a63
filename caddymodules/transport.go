package caddymodules

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/switchyardhq/switchyard/internal/bodyconn"
)

func init() {
	caddy.RegisterModule(HTTPTransport{})
}

// HTTPTransport is Caddy's `http` transport of reverse_proxy, with the
// same options, whose plain connections write a request's body through
// a pooled buffer (bodyconn). The gateway's reverse proxies use it: a
// body longer than the room the headers leave in the transport's write
// buffer (4 KiB) goes out through the connection's ReadFrom, which
// Caddy's own transport's connections do through a buffer as large as
// the body (up to 32 KiB) made for each request.
type HTTPTransport struct {
	reverseproxy.HTTPTransport
}

// CaddyModule returns the Caddy module information.
func (HTTPTransport) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.reverse_proxy.transport.switchyard_http",
		New: func() caddy.Module { return new(HTTPTransport) },
	}
}

// Provision builds Caddy's transport, then wraps its connections.
func (t *HTTPTransport) Provision(ctx caddy.Context) error {
	if err := t.HTTPTransport.Provision(ctx); err != nil {
		return err
	}
	copyBodiesThroughPool(&t.HTTPTransport)
	return nil
}

// copyBodiesThroughPool wraps the plain connections of t, provisioned,
// in bodyconn.Conn. Only DialContext's: a TLS connection, whether the
// transport wraps one of these or Caddy dials it (DialTLSContext, for a
// server name with placeholders or the proxy protocol), must stay a
// *tls.Conn for net/http to read what it negotiated, and the plain one
// under it is written with Write only. HTTP/3 dials no TCP connection.
func copyBodiesThroughPool(t *reverseproxy.HTTPTransport) {
	t.Transport.DialContext = bodyconn.Dial(t.Transport.DialContext)
}

// Interface guards: what reverse_proxy and its Caddyfile ask of a
// transport, Caddy's `http` one's.
var (
	_ http.RoundTripper                                = (*HTTPTransport)(nil)
	_ caddyfile.Unmarshaler                            = (*HTTPTransport)(nil)
	_ caddy.Provisioner                                = (*HTTPTransport)(nil)
	_ caddy.CleanerUpper                               = (*HTTPTransport)(nil)
	_ reverseproxy.TLSTransport                        = (*HTTPTransport)(nil)
	_ reverseproxy.H2CTransport                        = (*HTTPTransport)(nil)
	_ reverseproxy.ProxyProtocolTransport              = (*HTTPTransport)(nil)
	_ reverseproxy.HealthCheckSchemeOverriderTransport = (*HTTPTransport)(nil)
	_ reverseproxy.RequestHeaderOpsTransport           = (*HTTPTransport)(nil)
)
