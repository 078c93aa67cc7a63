package caddymodules

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// admission is the one admission step of every authenticated /v1 and /v3
// request (switchyard_limits), shared by the handlers that read bodies
// after it. One per config.
type admission struct {
	bodies *bodyReader
	routes *billing.RouteSet // the routes' meters
}

func newAdmission(c *limits.Config) *admission {
	return &admission{bodies: &bodyReader{c.BodyReader()}, routes: billing.NewRouteSet(chatPath, assistantResponsesPath)}
}

// admitted is what the admission step holds for a request until its
// handlers return.
type admitted struct {
	lease *limits.Lease
	hold  *limits.Hold
}

// release frees the stream slot and whatever of the hold the charge did
// not take over (limits.Hold.Handover), a panic included.
func (ad admitted) release() {
	ad.lease.Release()
	ad.hold.Release()
}

// admit runs the admission step for a request of p, in this order; each
// refusal is the client's error, and what a refused request has spent is
// in docs/billing.md ("The admission order"):
//
//  1. The body's label: a request whose body its route's meter does not
//     read (billing.CheckBody) gets 415, and one read as a /v1 JSON body
//     that carries a query string (billing.CheckQuery) 400, before
//     anything is counted.
//  2. Before the body, what the node knows without a round trip
//     (limits.Prechecker, billing.BeforeBody): a ledger balance below the
//     minimum charge, a key whose rate this node saw spent (in process:
//     the exact rate and available balance). 402 or 429 without a byte
//     of the body read. A request without a body to read is admitted
//     here instead, by the rate and the balance check in one Admit.
//  3. The body, on a route whose meter reads one: read within the
//     account's share of the node's body memory and the body timeout,
//     and parsed strictly once (probeBody); 400, 408, 413, 429 or 503.
//     Such a refusal spends one request of the key's rate (spendRate).
//  4. After the body, one Admit (one Redis round trip): the key's rate,
//     a stream slot when it asks for a stream, and on a chargeable route
//     a hold of its estimate (billing.AfterBody); 429 or 402, a refusal
//     by one spending nothing of the others.
func (h *Limits) admit(w http.ResponseWriter, r *http.Request, st *requestState, p policy.Principal) (admitted, error) {
	a := h.app.admission
	m := a.routes.Load().BodyMeter(r.Method, r.URL.Path)
	hasBody := body.HasBody(r)
	if err := billing.CheckBody(m, r.Method, r.URL.Path, r.Header, hasBody); err != nil {
		return admitted{}, err
	}
	if hasBody {
		st.noteChecked(m, r.Header)
	}
	if err := billing.CheckQuery(m, r.Method, r.URL.Path, r.URL.RawQuery); err != nil {
		return admitted{}, err
	}
	prof := h.app.Profile()
	lim := h.app.Limiter()
	before := billing.BeforeBody(prof, p, m)
	if !m.ReadsBody() || !body.HasBody(r) {
		// Nothing to read, so nothing to wait for: this is the request's
		// admission. A request without a body has nothing to hold for:
		// the handler refuses it (400 from the meter and the chat
		// handler, 404 or 405 elsewhere).
		adm, err := lim.Admit(r.Context(), before)
		limits.SetHeaders(w.Header(), adm.Rate)
		h.countAdmission(p, adm, err)
		return admitted{}, h.refusal(err, p)
	}
	if pre, err := lim.Precheck(before); err != nil {
		limits.SetHeaders(w.Header(), pre.Rate)
		h.countAdmission(p, pre, err)
		return admitted{}, h.refusal(err, p)
	}
	ask, err := probeBody(w, r, st, a.bodies, m, prof)
	if err != nil {
		h.spendRate(w, r, p, before.Rate)
		return admitted{}, err
	}
	if err := policy.CheckModel(p, ask.Model); err != nil {
		return admitted{}, err
	}
	after, ok := billing.AfterBody(prof, p, ask)
	if !ok {
		return admitted{}, nil
	}
	adm, err := lim.Admit(r.Context(), after)
	limits.SetHeadersIn(w.Header(), adm.Rate, st.rateHeaderRoom())
	h.countAdmission(p, adm, err)
	if err != nil {
		return admitted{}, h.refusal(err, p)
	}
	if adm.Hold != nil {
		st.hold = adm.Hold
	}
	return admitted{lease: adm.Lease, hold: adm.Hold}, nil
}

// spendRate counts a request whose body was refused against its key's
// rate, in a limiter step of its own (one Redis round trip, on a request
// the gateway refuses anyway): else a key could have bodies read and
// refused without end, its rate never spent and so never refusing it
// before the body. The refusal the client gets is the body's; a rate
// this spends to the end is known to the next request's check before its
// body. It is spent even when the client has gone. It is no admission
// decision, and is not counted as one.
func (h *Limits) spendRate(w http.ResponseWriter, r *http.Request, p policy.Principal, rate limits.Rate) {
	if !rate.Enabled() {
		return
	}
	adm, _ := h.app.Limiter().Admit(context.WithoutCancel(r.Context()), limits.AdmitRequest{Key: p.KeyID, Account: p.AccountID, Rate: rate})
	limits.SetHeaders(w.Header(), adm.Rate)
}

// countAdmission counts a request's admission decision once, its last.
func (h *Limits) countAdmission(p policy.Principal, adm limits.Admission, err error) {
	h.app.metrics.CountAdmission(adm, err)
	if errors.Is(err, limits.ErrUnavailable) {
		h.logger.Warn("limits unavailable, request refused", zap.String("key_id", p.KeyID), zap.Error(err))
	}
}

// refusal is the client's error for the limiter's refusal err, nil for
// none.
func (h *Limits) refusal(err error, p policy.Principal) error {
	if err == nil {
		return nil
	}
	return billing.Refusal(err, p.BalanceCents)
}

// writeRefusal answers a request refused at admission, making sure the
// server does not wait for a body nobody will read.
func writeRefusal(w http.ResponseWriter, r *http.Request, err error) {
	dropUnread(w, r)
	apierror.Write(w, err)
}
