package caddymodules

import (
	"net/http"
	"slices"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/routing"
)

// responsesRoute is the Responses API's route below a switchyard_proxy's
// prefix: POST /v1/responses, metered by billing.ParseResponses.
const responsesRoute = "POST /responses"

// registerResponses tells the admission step the path of h's Responses
// route, when h serves it, so that its body is read as a Responses body:
// sent on unchanged, estimated from its input.
func (h *Proxy) registerResponses(a *admission) {
	if slices.Contains(h.Routes, responsesRoute) {
		a.routes.AddResponses(h.Prefix + "/responses")
	}
}

// v1Parse is the strict parse of a /v1 body that m meters.
func v1Parse(m billing.BodyMeter) func([]byte) (billing.V1Request, error) {
	if m == billing.V1Responses {
		return billing.ParseResponses
	}
	return billing.ParseV1
}

// v1ParseOf is the strict parse of r's /v1 body, by its route.
func (a *admission) v1ParseOf(r *http.Request) func([]byte) (billing.V1Request, error) {
	return v1Parse(a.routes.Load().BodyMeter(r.Method, r.URL.Path))
}

// headerIncludeCost asks, with the value "1", for the cost of the request
// in its answer's usage (spec 4.1), on /v1 as on /v3.
const headerIncludeCost = "X-Include-Cost"

func includeCost(r *http.Request) bool { return headerValue(r.Header, headerIncludeCost) == "1" }

// showCost makes mw's meter add cost_cents to the usage the client
// receives, priced as h.charge will price the exchange x with that usage.
func (h *Meter) showCost(r *http.Request, mw *billing.MeterWriter, x billing.V1Exchange) {
	mw.Meter.ShowCost(func(u billing.Usage) int64 {
		x.Status, x.Usage = http.StatusOK, u
		rec, _ := billing.V1Record(x)
		if model := answeringModel(r); model != "" {
			// A model's pool answers: its fallback's prices apply.
			rec.Model = model
		}
		return h.usage.Price(rec)
	})
}

// routeStateVar holds the *routing.State of a /v1 request routed to a
// model's pool, while the pool answers it.
const routeStateVar = "switchyard.route_state"

// answeringModel is the model whose pool answers r: the one servedVar
// names once the pools are done, or while a stream passes, the model of
// the latest attempt (one that has begun to answer is the last). The
// pool's transport sets it on the handler's goroutine, before the answer
// reaches the meter. "" without model pools.
func answeringModel(r *http.Request) string {
	if s, ok := caddyhttp.GetVar(r.Context(), servedVar).(servedBy); ok {
		return s.model
	}
	if s, ok := caddyhttp.GetVar(r.Context(), routeStateVar).(*routing.State); ok {
		return s.Model
	}
	return ""
}
