package caddymodules

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/switchyardhq/switchyard/internal/bodyconn"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/routing"
)

// The gateway's transport dials plain connections that copy a body
// through a pooled buffer (internal/bodyconn, whose tests count what a
// copy allocates), where Caddy's http transport dials bare ones; a body
// within reverse_proxy's request buffer and one past it reach the
// upstream whole through it.
func TestHTTPTransportCopiesLongBodiesThroughAPool(t *testing.T) {
	up, got := recordingUpstream(t, httptest.NewServer)
	addr := up.Listener.Addr().String()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	ours, caddys := new(HTTPTransport), new(reverseproxy.HTTPTransport)
	for _, tr := range []caddy.Provisioner{ours, caddys} {
		if err := tr.Provision(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for name, dial := range map[string]bodyconn.DialFunc{"switchyard_http": ours.Transport.DialContext, "http": caddys.Transport.DialContext} {
		c, err := dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, wrapped := c.(*bodyconn.Conn)
		if want := name == "switchyard_http"; wrapped != want {
			t.Errorf("%s dialed a %T", name, c)
		}
		_ = c.Close()
	}

	servers := loadProxies(t, map[string]map[string]any{
		"switchyard_http": upstreamProxy(t, "http", addr, nil),
	})
	for _, size := range []int{3_000, 20_000} {
		body := longChatBody(size)
		serveOK(t, servers["switchyard_http"], proxiedRequest(body))
		if b := got.Load().([]byte); string(b) != body {
			t.Fatalf("a body of %d: the upstream read %d bytes", len(body), len(b))
		}
	}
}

// A TLS upstream is reached through the gateway's transport as through
// Caddy's, with a server name Go's transport dials for and with one
// that has placeholders, which Caddy dials itself; long bodies arrive
// whole.
func TestHTTPTransportReachesTLSUpstreams(t *testing.T) {
	up, got := recordingUpstream(t, httptest.NewTLSServer)
	addr := up.Listener.Addr().String()
	servers := loadProxies(t, map[string]map[string]any{
		"plain name": upstreamProxy(t, "https", addr, map[string]any{
			"tls": map[string]any{"server_name": "127.0.0.1", "insecure_skip_verify": true},
		}),
		"placeholder": upstreamProxy(t, "https", addr, map[string]any{
			"tls": map[string]any{"server_name": "{http.reverse_proxy.upstream.hostname}", "insecure_skip_verify": true},
		}),
	})
	for name, srv := range servers {
		for _, size := range []int{1_000, 100_000} {
			body := longChatBody(size)
			serveOK(t, srv, proxiedRequest(body))
			if b := got.Load().([]byte); string(b) != body {
				t.Errorf("%s: the upstream read %d bytes of %d", name, len(b), len(body))
			}
		}
	}
}

// An h2c upstream is reached through the gateway's transport in HTTP/2
// over its wrapped connection; long bodies arrive whole.
func TestHTTPTransportReachesH2CUpstreams(t *testing.T) {
	var proto atomic.Int32
	up, got := recordingUpstream(t, func(h http.Handler) *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proto.Store(int32(r.ProtoMajor))
			h.ServeHTTP(w, r)
		}))
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		return srv
	})
	servers := loadProxies(t, map[string]map[string]any{
		"h2c": upstreamProxy(t, "http", up.Listener.Addr().String(), map[string]any{"versions": []string{"h2c"}}),
	})
	for _, size := range []int{1_000, 100_000} {
		body := longChatBody(size)
		serveOK(t, servers["h2c"], proxiedRequest(body))
		if b := got.Load().([]byte); string(b) != body {
			t.Errorf("the upstream read %d bytes of %d", len(b), len(body))
		}
		if p := proto.Load(); p != 2 {
			t.Errorf("the upstream was reached in HTTP/%d", p)
		}
	}
}

// An operator's reverse_proxy may name the gateway's transport with the
// options of Caddy's http transport, which it keeps, and an https
// upstream enables its TLS as it does Caddy's.
func TestHTTPTransportInACaddyfile(t *testing.T) {
	js, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(`:8080 {
	reverse_proxy https://10.0.0.5:8443 {
		transport switchyard_http {
			dial_timeout 2s
			tls_server_name api.example
			keepalive 90s
		}
	}
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"protocol":"switchyard_http"`, `"dial_timeout":2000000000`, `"server_name":"api.example"`, `"idle_timeout":90000000000`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("the adapted config lacks %s:\n%s", want, js)
		}
	}
}

// recordingUpstream is an upstream started by start that keeps the last
// body it read.
func recordingUpstream(t *testing.T, start func(http.Handler) *httptest.Server) (*httptest.Server, *atomic.Value) {
	var got atomic.Value
	up := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(benchAnswerBody)
	}))
	t.Cleanup(up.Close)
	return up, &got
}

// upstreamProxy is the reverse_proxy handler of switchyard_proxy for the
// upstream at scheme://addr/v1, with transport's fields set over its
// transport's.
func upstreamProxy(t *testing.T, scheme, addr string, transport map[string]any) map[string]any {
	t.Helper()
	cfg, err := routing.UpstreamJSON("/v1", scheme, addr, "/v1", routing.DefaultDialTimeout, routing.DefaultResponseHeaderTimeout)
	if err != nil {
		t.Fatal(err)
	}
	var rp map[string]any
	if err := json.Unmarshal(cfg, &rp); err != nil {
		t.Fatal(err)
	}
	rp["handler"] = "reverse_proxy"
	for k, v := range transport {
		rp["transport"].(map[string]any)[k] = v
	}
	return rp
}

// loadProxies loads a Caddy server of each handler and returns them by
// the handlers' names.
func loadProxies(t *testing.T, handlers map[string]map[string]any) map[string]*caddyhttp.Server {
	t.Helper()
	addrs := testenv.FreeAddrs(t, len(handlers))
	servers := map[string]any{}
	names := map[string]string{} // by port
	for name, h := range handlers {
		addr := addrs[len(servers)]
		_, port, _ := net.SplitHostPort(addr)
		names[port] = name
		servers[name] = map[string]any{
			"listen": []string{addr},
			"routes": []any{map[string]any{"handle": []any{h}}},
		}
	}
	cfg, _ := json.Marshal(map[string]any{
		"admin": map[string]any{"disabled": true},
		"apps":  map[string]any{"http": map[string]any{"servers": servers}},
	})
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*caddyhttp.Server{}
	for _, srv := range app.(*caddyhttp.App).Servers {
		_, port, _ := net.SplitHostPort(srv.Listen[0])
		out[names[port]] = srv
	}
	return out
}

// proxiedRequest is a /v1 request with body, as the server reads it off
// the wire.
func proxiedRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "http://127.0.0.1:8080/v1/chat/completions", strings.NewReader(body))
	r.RequestURI = "/v1/chat/completions"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return r
}
