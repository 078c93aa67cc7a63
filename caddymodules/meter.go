package caddymodules

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/telemetry"
)

func init() {
	// After switchyard_auth and switchyard_limits (registered earlier),
	// before reverse_proxy and switchyard_proxy.
	registerHandler[Meter](httpcaddyfile.Before, "reverse_proxy")
}

// Meter charges the legacy /v1 API per token, like /v3, with the rules of
// billing.ParseV1, billing.Meter and billing.V1Record: every request that
// can carry a body (any method but GET, HEAD, DELETE and OPTIONS) is read
// as JSON, strictly (what the meter cannot read is refused with 400, so
// no backend reads it differently), and must be labelled as JSON (415
// otherwise: see billing.CheckBody); a request of the other methods must
// carry no body. The usage the backend reports is read as the answer
// passes, and the request is charged once, under the server's own id for
// it. A client that leaves mid-answer is charged for what was generated.
// Nothing passes unread: switchyard_proxy refuses a request with a body
// this handler did not meter. It needs switchyard_auth in front of it,
// and normally switchyard_limits, whose parse it reuses.
type Meter struct {
	appHandler
	usage settlingRecorder
}

// CaddyModule returns the Caddy module information.
func (Meter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.switchyard_meter",
		New: func() caddy.Module { return new(Meter) },
	}
}

// Provision implements caddy.Provisioner.
func (h *Meter) Provision(ctx caddy.Context) error {
	if err := h.provisionApp(ctx); err != nil {
		return err
	}
	h.usage = h.settlingRecorder(telemetry.RouteV1, "recording /v1 usage")
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Meter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) (err error) {
	st := stateOf(r.Context())
	p, ok := h.principalIn(w, r, st)
	if !ok {
		return nil
	}
	m := billing.MethodMeter(r.Method)
	if err := st.checkedBody(m, r); err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	if m == billing.NoBody {
		return next.ServeHTTP(w, r)
	}
	// The parse stays on the request: the proxy routes by its model.
	req, err := parsedV1(w, r, st, h.app.admission.bodies, h.app.admission.v1ParseOf(r))
	if err != nil {
		writeRefusal(w, r, err)
		return nil
	}
	v1 := st.forV1()
	v1.metered = true
	// The bytes the backend gets: the body as read, or as rewritten to
	// ask for usage. The probe in front has put the read body back
	// already, which is pointed at them rather than replaced.
	if rb, ok := r.Body.(*body.ReadBody); ok {
		rb.Reset(req.Body)
	} else {
		r.Body = body.NewReadBody(req.Body)
	}
	r.ContentLength = int64(len(req.Body))
	setContentLength(r.Header, len(req.Body))
	// The body is already read: a 100 Continue must not be asked of, or
	// answered by, the backend.
	delete(r.Header, headerExpect)

	e := v1.exchange.take()
	e.metrics = h.app.metrics
	e.x = billing.V1Exchange{AccountID: p.AccountID, KeyID: p.KeyID, ChargeID: st.chargeID(), Request: req, Started: time.Now()}
	x, mw := &e.x, &e.mw
	// With X-Include-Cost the usage chunk asked for on the client's
	// behalf is kept: it is where the cost is shown.
	e.meter.Init(req.DropUsage && !includeCost(r))
	mw.Init(w, &e.meter, e)
	if includeCost(r) {
		h.showCost(r, mw, *x)
	}
	// Charged in a defer: reverse_proxy ends a stream the client cut off
	// with panic(http.ErrAbortHandler), and that request is owed too.
	defer func() {
		rec := recover()
		mw.FlushRest()
		x.Status, x.Streamed, x.Usage = mw.Status(), mw.Meter.Streamed(), mw.Meter.Usage()
		x.ClientGone = r.Context().Err() != nil || rec != nil
		x.Finished = time.Now()
		// The response is complete once the handlers return; the charge
		// is committed after that, by the ledger writer, and the hold
		// stays until then.
		h.charge(r.Context(), st, *x, &e.charge)
		if rec != nil {
			panic(rec)
		}
	}()
	return next.ServeHTTP(mw, r)
}

// meteredExchange is what switchyard_meter keeps of a request while it
// is answered: the exchange to charge, the meter and the writer it reads
// the answer through, in the request's v1State instead of an allocation
// each.
type meteredExchange struct {
	x       billing.V1Exchange
	charge  billing.HeldCharge // the ledger writer's completion of its charge
	meter   billing.Meter
	mw      billing.MeterWriter
	metrics *telemetry.Metrics
}

// HeadersSent observes the time to the upstream's first byte, when the
// answer's headers go out (billing.HeadersNoter).
func (e *meteredExchange) HeadersSent() { e.metrics.ObserveFirstByte(e.x.Started) }

// setContentLength sets h's Content-Length to n, unless it says n
// already, as the client's normally does: Header.Set would make the
// string and its slice anew.
func setContentLength(h http.Header, n int) {
	var buf [20]byte
	if v := h["Content-Length"]; len(v) == 1 && v[0] == string(strconv.AppendInt(buf[:0], int64(n), 10)) {
		return
	}
	h.Set("Content-Length", strconv.Itoa(n))
}

// charge settles x's usage record (settlingRecorder), kept in *kept,
// the charge's completion, until the charge is committed. A request that
// is not charged keeps its hold for the Limits handler to release. st is
// the request's state.
func (h *Meter) charge(ctx context.Context, st *requestState, x billing.V1Exchange, kept *billing.HeldCharge) {
	rec, ok := billing.V1Record(x)
	if !ok {
		return
	}
	// Only a model's pool sets servedVar (serveModels).
	if h.app.pools != nil {
		if s, ok := caddyhttp.GetVar(ctx, servedVar).(servedBy); ok {
			// A model's pool answered: its fallback's prices apply.
			rec.Model, rec.Upstream = s.model, s.upstream
		}
	}
	*kept = billing.HeldCharge{Record: rec}
	h.usage.settleIn(st, kept)
}

// settlingRecorder settles the charges of one route (billing.Settler)
// with the hold of the request.
type settlingRecorder struct{ billing.Settler }

// settlingRecorder is the handler's recorder of the charges of route;
// failMsg is logged when a charge could not be recorded.
func (h *appHandler) settlingRecorder(route, failMsg string) settlingRecorder {
	m, logger := h.app.metrics, h.logger
	return settlingRecorder{billing.Settler{
		Recorder: &billing.Recorder{Store: h.app.Store(), Profile: h.app.Profile(), Writer: h.app.backend.ledger},
		Committed: func(rec storage.UsageRecord, charged int64, err error) {
			m.CountCharge(route, rec, charged, err)
			if err != nil {
				logger.Error(failMsg, zap.String("charge_id", rec.RequestID), zap.Error(err))
			}
		},
	}}
}

// settle hands rec, and the hold of the request in ctx, to the ledger
// writer, and returns rec's price.
func (s settlingRecorder) settle(ctx context.Context, rec storage.UsageRecord) int64 {
	return s.settleIn(stateOf(ctx), &billing.HeldCharge{Record: rec})
}

// settleIn is settle of c's record for a handler that has the request's
// state st at hand. c must not change until the charge is committed
// (billing.Settler.SettleHeld).
func (s settlingRecorder) settleIn(st *requestState, c *billing.HeldCharge) int64 {
	price := s.SettleHeld(c, st.hold.Handover())
	st.activity.Charged(c.Record, price)
	st.line.Charged(c.Record, price)
	return price
}

// UnmarshalCaddyfile implements caddyfile.Unmarshaler. Syntax:
//
//	switchyard_meter
func (h *Meter) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return noArgs(d, "switchyard_meter takes no arguments")
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Meter)(nil)
	_ caddyhttp.MiddlewareHandler = (*Meter)(nil)
	_ caddyfile.Unmarshaler       = (*Meter)(nil)
)
