package caddymodules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/telemetry"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// pools are the models block of one config, provisioned: one Caddy
// reverse_proxy handler per model, owned by the switchyard app so that
// /v1 (switchyard_proxy) and /v3 (switchyard_chat) choose from the same
// upstreams, with the same health state and in-flight counts. Health
// state outlives a reload where an upstream's address stays: Caddy keeps
// it per dial address in its shared hosts pool.
type pools struct {
	table   routing.Table[*pool]
	metrics *telemetry.Routes
	created int64 // Unix time the models are listed as created at
}

// pool is one model's reverse_proxy and what its transport needs.
type pool struct {
	name    string
	ups     []routing.Upstream
	rp      *reverseproxy.Handler
	tr      *poolTransport
	metrics *telemetry.Routes
}

// Model implements routing.Named.
func (p *pool) Model() string { return p.name }

// poolRoute is a pool in a request's chain, where Caddy's next handler
// follows it.
type poolRoute struct {
	*pool
	next caddyhttp.Handler
}

// ServeHTTP implements routing.Pool.
func (p poolRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	return p.rp.ServeHTTP(w, r, p.next)
}

// provisionPools builds and provisions the pools of models; nil when
// there are none.
func provisionPools(ctx caddy.Context, models []*routing.Model, m *telemetry.Routes) (*pools, error) {
	if len(models) == 0 {
		return nil, nil
	}
	ps := &pools{metrics: m, created: time.Now().Unix()}
	repl := caddy.NewReplacer()
	for _, cfg := range models {
		p, err := provisionPool(ctx, repl, cfg, m)
		if err != nil {
			ps.cleanup()
			return nil, err
		}
		ps.table.Add(p, cfg.Fallbacks)
	}
	return ps, nil
}

func provisionPool(ctx caddy.Context, repl *caddy.Replacer, cfg *routing.Model, m *telemetry.Routes) (*pool, error) {
	p := &pool{name: cfg.Name, metrics: m}
	for _, u := range cfg.Upstreams {
		r, err := u.Resolve(expander(repl), cfg)
		if err != nil {
			return nil, err
		}
		p.ups = append(p.ups, r)
	}
	raw, err := cfg.ReverseProxyJSON(p.ups)
	if err != nil {
		return nil, err
	}
	rp := new(reverseproxy.Handler)
	if err := json.Unmarshal(raw, rp); err != nil {
		return nil, fmt.Errorf("model %q: building reverse proxy: %v", cfg.Name, err)
	}
	tr, err := newPoolTransport(ctx, cfg, p)
	if err != nil {
		return nil, fmt.Errorf("model %q: %v", cfg.Name, err)
	}
	// Set in Go rather than as a transport module: it exists only to
	// give each upstream of the pool its own base path, key and model
	// name, which reverse_proxy configures per handler, not per upstream.
	rp.Transport = tr
	p.tr = tr
	// Filled before Provision, which starts the first health check.
	tr.byUpstream = make(map[*reverseproxy.Upstream]*routing.Upstream, len(rp.Upstreams))
	for i, u := range rp.Upstreams {
		tr.byUpstream[u] = &p.ups[i]
	}
	if err := rp.Provision(ctx); err != nil {
		_ = tr.Cleanup()
		return nil, fmt.Errorf("model %q: provisioning reverse proxy: %v", cfg.Name, err)
	}
	p.rp = rp
	return p, nil
}

// cleanup stops the pools' health checkers and lets go of their hosts.
func (ps *pools) cleanup() error {
	if ps == nil {
		return nil
	}
	var errs []error
	for _, p := range ps.table.Pools() {
		if p.rp != nil {
			errs = append(errs, p.rp.Cleanup(), p.tr.Cleanup())
		}
	}
	return errors.Join(errs...)
}

// chain is the pools a request for model goes to, in order: the model's
// own, then its fallbacks, with next after each. ok is false for a model
// not configured.
func (ps *pools) chain(model string, next caddyhttp.Handler) ([]poolRoute, bool) {
	chain, ok := ps.table.Chain(model)
	out := make([]poolRoute, len(chain))
	for i, p := range chain {
		out[i] = poolRoute{pool: p, next: next}
	}
	return out, ok
}

// Route implements upstream.Router for the /v3 client.
func (ps *pools) Route(model string) ([]upstream.Target, bool) {
	chain, ok := ps.table.Chain(model)
	if !ok {
		return nil, false
	}
	out := make([]upstream.Target, len(chain))
	for i, p := range chain {
		out[i] = upstream.Target{Model: p.name, Transport: p}
	}
	return out, true
}

// poolTransport is the transport of a model's reverse_proxy: Caddy's own
// HTTP transport, its long bodies written through a pooled buffer as
// switchyard_http's are, with what differs between the upstreams of one pool
// applied per upstream after reverse_proxy chose it: scheme, base path,
// Host, key, and the model name in the body.
type poolTransport struct {
	pool       *pool
	plain      *reverseproxy.HTTPTransport
	tls        *reverseproxy.HTTPTransport // nil without https upstreams
	byUpstream map[*reverseproxy.Upstream]*routing.Upstream
}

func newPoolTransport(ctx caddy.Context, cfg *routing.Model, p *pool) (*poolTransport, error) {
	dial, header := cfg.TransportTimeouts(routing.DefaultDialTimeout, routing.DefaultResponseHeaderTimeout)
	newHTTP := func(tls bool) (*reverseproxy.HTTPTransport, error) {
		t := &reverseproxy.HTTPTransport{
			DialTimeout:           caddy.Duration(dial),
			ResponseHeaderTimeout: caddy.Duration(header),
		}
		if tls {
			t.TLS = new(reverseproxy.TLSConfig)
		}
		if err := t.Provision(ctx); err != nil {
			return nil, fmt.Errorf("provisioning transport: %v", err)
		}
		copyBodiesThroughPool(t) // as switchyard_http's (transport.go)
		return t, nil
	}
	t := &poolTransport{pool: p}
	var err error
	if t.plain, err = newHTTP(false); err != nil {
		return nil, err
	}
	for _, u := range p.ups {
		if u.Scheme == "https" {
			if t.tls, err = newHTTP(true); err != nil {
				return nil, err
			}
			break
		}
	}
	return t, nil
}

// RoundTrip implements http.RoundTripper. It serves both the proxied
// requests and the active health checks, which carry no routeState.
func (t *poolTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	di, _ := reverseproxy.GetDialInfo(req.Context())
	up := t.byUpstream[di.Upstream]
	if up == nil {
		return nil, fmt.Errorf("model %q: request for an upstream not in the pool (%s)", t.pool.name, di.Address)
	}
	out, state, err := up.Outgoing(req)
	if err != nil {
		return nil, err
	}
	if state != nil {
		if state.Attempt(t.pool.name, up.Name) {
			t.pool.metrics.CountRetry(t.pool.name)
		}
		t.pool.metrics.CountSelection(t.pool.name, up.Name)
	}
	inner := t.plain
	if up.Scheme == "https" {
		inner = t.tls
	}
	return inner.RoundTrip(out)
}

// Cleanup lets go of the inner transports' connections.
func (t *poolTransport) Cleanup() error {
	var errs []error
	for _, h := range []*reverseproxy.HTTPTransport{t.plain, t.tls} {
		if h != nil {
			errs = append(errs, h.Cleanup())
		}
	}
	return errors.Join(errs...)
}

// poolFailed reports whether err, returned by a pool's reverse_proxy
// that wrote nothing, is the pool's failure, after which the next
// fallback may answer: no upstream answered, or the last one answered
// 5xx or 429.
func poolFailed(err error) bool {
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) {
		return err != nil
	}
	return he.StatusCode >= 500 || he.StatusCode == http.StatusTooManyRequests
}

// RoundTrip lets the /v3 client send a round through the pool: the same
// reverse_proxy handler as /v1, so the same selection, in-flight counts,
// health state and retries. The request is served in process; the
// answer streams back through a pipe. req's context must be that of a
// request the Caddy server is serving.
func (p *pool) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	server, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || server == nil {
		return nil, errors.New("model pool used outside a request the server is serving")
	}
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	state := routing.NewState(body, p.name)
	// A replacer and variables of its own: reverse_proxy writes to both,
	// and the proxied round outlives the moment the caller reads them.
	ctx = routing.WithState(ctx, state)
	ctx = context.WithValue(ctx, caddy.ReplacerCtxKey, caddy.NewReplacer())
	ctx = context.WithValue(ctx, caddyhttp.VarsCtxKey, map[string]any{
		caddyhttp.TrustedProxyVarKey: false,
		caddyhttp.ClientIPVarKey:     "",
	})
	ctx = context.WithValue(ctx, caddyhttp.OriginalRequestCtxKey, *req)
	r := req.WithContext(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.RequestURI = r.URL.RequestURI()
	r.Host = r.URL.Host

	resp := routing.ServeInProcess(req, func(w http.ResponseWriter) error {
		return p.rp.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil }))
	}, handlerErrorStatus)
	// The attempts are over once the headers are: the state is the
	// answering upstream's.
	resp.Header.Set(upstream.UpstreamHeader, state.Upstream)
	if state.Upstream != "" {
		// Read here, in the caller's goroutine, which owns the request's
		// log fields; the round goes on in its own.
		lineFor(req.Context()).Served(state.Upstream, state.Model, state.Attempts, -1)
	}
	return resp, nil
}

// handlerErrorStatus is the status of a Caddy handler error; 0 for
// another error.
func handlerErrorStatus(err error) int {
	var he caddyhttp.HandlerError
	if errors.As(err, &he) {
		return he.StatusCode
	}
	return 0
}
