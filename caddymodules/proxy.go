package caddymodules

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/internal/httpstatus"
	"github.com/switchyardhq/switchyard/internal/idle"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/policy/passthrough"
	"github.com/switchyardhq/switchyard/routing"
)

func init() {
	registerHandler[Proxy](httpcaddyfile.After, "reverse_proxy")
}

// Proxy is Caddy's reverse_proxy aimed at the switchyard app's upstream, for
// the legacy /v1 API that passes through unchanged. When the app
// configures models, the request's model picks the model's pool instead,
// and the dial and header timeouts are the model's (docs/routing.md). One base URL configures
// what reverse_proxy would need four settings for: the dial address, TLS
// for https, the Host header, and the path prefix (a request for
// /v1/chat/completions goes to <upstream base>/chat/completions).
//
// Only the allowed routes pass (Routes), a route with a body without a
// query string (400 unsupported_parameter: billing.CheckQuery), with an
// allow-list of request headers: the caller's Authorization is replaced by the configured
// upstream key, or removed when there is none, and no other credential
// header or cookie reaches the upstream. Of the upstream's response
// headers the client sees only an allow-list too. Streams are flushed as
// they arrive: Caddy's proxy does so for event streams and for bodies of
// unknown length; an answer of known length, such as a JSON completion,
// leaves in one write instead of a header write, a body write and a
// flush timer. An upstream that does not
// accept a connection within DialTimeout, or send its response headers
// within ResponseHeaderTimeout, gets the client 502 upstream_unavailable.
type Proxy struct {
	// The path prefix that stands for the upstream base URL in requests.
	// Default: /v1.
	Prefix string `json:"prefix,omitempty"`

	// The routes passed upstream, as "METHOD /path" below the prefix; a
	// path ending in "/*" matches anything below it. Others are answered
	// 404 route_not_found without reaching the upstream. A route of a
	// method that carries a body must be one a meter reads
	// (billing.V1Routes: chat completions, completions, embeddings,
	// responses); a config that names another is refused, as the gateway
	// could not bill it. Routes of GET, HEAD, DELETE and OPTIONS take no
	// body. Default: DefaultV1Routes (chat completions, completions,
	// embeddings, responses, models).
	Routes []string `json:"routes,omitempty"`

	// Longest wait for a connection to the upstream. Default: 10s.
	DialTimeout caddy.Duration `json:"dial_timeout,omitempty"`

	// Longest wait, once the request is sent, for the upstream's response
	// headers: queueing and prompt processing on the backend. A stream's
	// body is not bounded, as long answers are long. When it passes the
	// client gets 502 upstream_unavailable. Default: 120s.
	ResponseHeaderTimeout caddy.Duration `json:"response_header_timeout,omitempty"`

	// Longest silence of the upstream once its response headers have
	// arrived: between two chunks of a stream. Without it an upstream that
	// stalls mid-stream would hold the request and its stream slot for
	// good; past it the stream is cut. Default: 120s.
	StreamIdleTimeout caddy.Duration `json:"stream_idle_timeout,omitempty"`

	rp       *reverseproxy.Handler // nil when no upstream is configured
	upstream passthrough.UpstreamHeaders
	queue    *limits.Queue // nil: no cap on generations in flight

	pools     *pools // the app's models; nil without
	bodies    *bodyReader
	admission *admission
	logger    *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Proxy) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_proxy",
		New: func() caddy.Module { return new(Proxy) },
	}
}

// Provision builds and provisions the reverse proxy.
func (h *Proxy) Provision(ctx caddy.Context) error {
	if h.Prefix == "" {
		h.Prefix = "/v1"
	}
	if len(h.Routes) == 0 {
		h.Routes = DefaultV1Routes
	}
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.queue = app.Queue()
	h.logger = ctx.Logger()
	h.admission = app.admission
	h.registerResponses(app.admission)
	if app.pools != nil {
		h.pools, h.bodies = app.pools, app.admission.bodies
		return nil
	}
	u := app.UpstreamURL()
	if u == nil {
		ctx.Logger().Warn("no upstream configured: proxied requests will answer 502 upstream_unavailable")
		return nil
	}
	t := h.timeouts()
	cfg, err := routing.UpstreamJSON(h.Prefix, u.Scheme, u.Host, u.Path, t.Dial, t.ResponseHeader)
	if err != nil {
		return err
	}
	h.upstream = passthrough.NewUpstreamHeaders(u.Host, app.settings.UpstreamKey)
	h.rp = new(reverseproxy.Handler)
	if err := json.Unmarshal(cfg, h.rp); err != nil {
		return fmt.Errorf("building reverse proxy: %v", err)
	}
	if err := h.rp.Provision(ctx); err != nil {
		return fmt.Errorf("provisioning reverse proxy: %v", err)
	}
	return nil
}

// timeouts are h's timeouts, defaults applied.
func (h *Proxy) timeouts() routing.Timeouts {
	return routing.Timeouts{Dial: time.Duration(h.DialTimeout), ResponseHeader: time.Duration(h.ResponseHeaderTimeout),
		Idle: time.Duration(h.StreamIdleTimeout)}.OrDefaults()
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if err := admitRoute(r, h.Prefix, h.Routes); err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	st := stateOf(r.Context())
	if err := h.checkMetered(r, st); err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	if err := billing.CheckRequestQuery(r); err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	passthrough.FilterRequestHeaders(r.Header)
	hf := st.forV1().headers.take()
	hf.Init(w)
	w = hf
	p, _ := st.principal(r.Context())
	w, shown, err := policy.ModelView(w, r, h.Prefix, *p)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	defer shown()
	if h.pools != nil {
		return h.serveModels(w, r, st, next)
	}
	if h.rp == nil {
		apierror.Write(w, httpstatus.Envelope(http.StatusBadGateway, r))
		return nil
	}
	h.upstream.Apply(r)
	w, r, gen, err := h.startGeneration(w, r, st)
	if err != nil {
		apierror.Write(w, err)
		return nil
	}
	defer gen.done()
	return h.rp.ServeHTTP(w, r, next)
}

// checkMetered refuses a request whose body would reach the upstream
// unread: a body on a route without one, or a request that can carry a
// body and that switchyard_meter did not take charge of (a Caddyfile
// without it in front). st is the request's state.
func (h *Proxy) checkMetered(r *http.Request, st *requestState) error {
	m := billing.MethodMeter(r.Method)
	if m == billing.NoBody {
		if err := billing.CheckBody(m, r.Method, r.URL.Path, r.Header, body.HasBody(r)); err != nil {
			return err
		}
		return nil
	}
	if v1 := st.v1; v1 == nil || !v1.metered {
		h.logger.Error("a request reached switchyard_proxy unmetered and was refused: put switchyard_meter in front of it",
			zap.String("method", r.Method), zap.String("path", r.URL.Path))
		return apierror.Internal()
	}
	return nil
}

// startGeneration waits for a slot of the queue and starts the idle watch
// on the answer, until the generation's done. The legacy API stays
// unchanged: a waiting request just waits, without queue_position
// chunks. The error is the client's answer. st is the request's state.
func (h *Proxy) startGeneration(w http.ResponseWriter, r *http.Request, st *requestState) (http.ResponseWriter, *http.Request, generation, error) {
	release, err := limits.EnterQueue(r.Context(), h.queue, nil)
	if err != nil {
		return w, r, generation{}, err
	}
	iw := st.forV1().watch.take()
	r = iw.Start(w, r, h.timeouts().Idle)
	return iw, r, generation{watch: iw, release: release}, nil
}

// generation is a request's slot of the queue and the idle watch on its
// answer, from startGeneration: a value, where a closure of the two
// would be an allocation a request.
type generation struct {
	watch   *idle.Writer
	release func()
}

// done stops the watch and gives the slot back.
func (g generation) done() { g.watch.Stop(); g.release() }

// Cleanup implements caddy.CleanerUpper.
func (h *Proxy) Cleanup() error {
	if h.rp == nil {
		return nil
	}
	return h.rp.Cleanup()
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_proxy [<prefix>] {
//		routes                  <METHOD /path>...
//		dial_timeout            <duration>
//		response_header_timeout <duration>
//		stream_idle_timeout     <duration>
//	}
func (h *Proxy) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if d.NextArg() {
		h.Prefix = d.Val()
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		var err error
		switch d.Val() {
		case "routes":
			args := d.RemainingArgs()
			if len(args) == 0 || len(args)%2 != 0 {
				return d.Err("routes: want pairs of METHOD /path")
			}
			for i := 0; i < len(args); i += 2 {
				h.Routes = append(h.Routes, strings.ToUpper(args[i])+" "+args[i+1])
			}
		case "dial_timeout":
			err = positiveDurationArg(d, &h.DialTimeout)
		case "response_header_timeout":
			err = positiveDurationArg(d, &h.ResponseHeaderTimeout)
		case "stream_idle_timeout":
			err = positiveDurationArg(d, &h.StreamIdleTimeout)
		default:
			return d.Errf("unrecognized switchyard_proxy option %q", d.Val())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Proxy)(nil)
	_ caddy.CleanerUpper          = (*Proxy)(nil)
	_ caddyhttp.MiddlewareHandler = (*Proxy)(nil)
	_ caddyfile.Unmarshaler       = (*Proxy)(nil)
)

// Validate implements caddy.Validator.
func (h *Proxy) Validate() error {
	if err := checkPathPrefix("switchyard_proxy", h.Prefix); err != nil {
		return err
	}
	if h.DialTimeout < 0 || h.ResponseHeaderTimeout < 0 || h.StreamIdleTimeout < 0 {
		return fmt.Errorf("switchyard_proxy: timeouts must not be negative")
	}
	for _, r := range h.Routes {
		if err := billing.CheckV1Route(r); err != nil {
			return fmt.Errorf("switchyard_proxy: %v", err)
		}
	}
	return nil
}

var _ caddy.Validator = (*Proxy)(nil)
