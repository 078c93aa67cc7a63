package caddymodules

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/translator/request"
)

// bodyReader reads request bodies into memory for the handlers that parse
// them (the admission step, the meter, the chat handler), within the
// node's budget and a deadline (package body).
type bodyReader struct{ body.Reader }

// read reads r's body once per request, for the account of its
// principal: later calls return the same bytes, which the request's
// state st keeps for the handlers after this one (limits, meter, chat).
func (br *bodyReader) read(w http.ResponseWriter, r *http.Request, st *requestState) ([]byte, error) {
	if st.body != nil {
		return st.body, nil
	}
	p, _ := st.principal(r.Context())
	b, err := br.ReadTo(w, r, p.AccountID, st.readBody.take())
	if err == nil {
		st.body = b
	}
	return b, err
}

// dropUnread bounds what the server does with the body of a request
// refused before its body was read whole (body.DropUnread).
func dropUnread(w http.ResponseWriter, r *http.Request) {
	if stateOf(r.Context()).body == nil {
		body.DropUnread(w, r)
	}
}

// Parses handed from the admission step to the handler that serves the
// request, so that a body is decoded once: a /v1 body's in the request's
// state (parsedV1), a /v3 chat body's in this variable, as a
// *request.Request, for switchyard_chat.
const chatRequestVar = "switchyard.chat_request"

// parsedBody is the parse of r's body that a handler in front kept under
// key (the admission step, the meter), else the body read by br and
// parsed here, then kept under key for the handlers after this one: a
// body is decoded once a request. An empty body is parsed too, and
// refused by parse.
func parsedBody[T any](w http.ResponseWriter, r *http.Request, key string, br *bodyReader,
	parse func([]byte) (T, error)) (T, error) {
	if v, ok := caddyhttp.GetVar(r.Context(), key).(T); ok {
		return v, nil
	}
	body, err := br.read(w, r, stateOf(r.Context()))
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := parse(body)
	if err == nil {
		caddyhttp.SetVar(r.Context(), key, v)
	}
	return v, err
}

// parsedV1 is parsedBody for a /v1 body, whose parse the request's state
// st keeps (v1State.req).
func parsedV1(w http.ResponseWriter, r *http.Request, st *requestState, br *bodyReader,
	parse func([]byte) (billing.V1Request, error)) (billing.V1Request, error) {
	v1 := st.forV1()
	if v1.parsed {
		return v1.req, nil
	}
	body, err := br.read(w, r, st)
	if err != nil {
		return billing.V1Request{}, err
	}
	v, err := parse(body)
	if err == nil {
		v1.req, v1.parsed = v, true
	}
	return v, err
}

// chatPath is the /v3 route whose body the admission step parses as the
// chat handler does.
const chatPath = "/v3/chat/completions"

// assistantResponsesPath is the /v3 Responses API route, served by the
// chat handler too: its body is parsed by request.ParseResponses.
const assistantResponsesPath = "/v3/responses"

// chatParser is the parse of a body of the chat handler's route r asks
// for: request.ParseResponses on the /v3 Responses route, else
// request.Parse.
func chatParser(r *http.Request, lim request.Limits) func([]byte) (*request.Request, error) {
	if strings.EqualFold(strings.TrimSuffix(r.URL.Path, "/"), assistantResponsesPath) {
		return func(body []byte) (*request.Request, error) { return request.ParseResponses(body, r.Header, lim) }
	}
	return func(body []byte) (*request.Request, error) { return request.Parse(body, r.Header, lim) }
}

// chatLimits are the bounds of a /v3 chat body, the same for the
// admission step and the chat handler: strict, so that the one parse is
// the handler's.
func chatLimits(prof policy.Profile) request.Limits {
	return request.Limits{Profile: prof, Strict: true}
}

// probeBody reads and parses the body of a request whose meter reads it
// (billing.BodyMeter.ReadsBody), to learn whether it asks for a stream
// and how much it may cost: a /v3 chat body by request.Parse (with
// chatLimits), a /v1 body by billing.ParseV1 (a Responses body by
// billing.ParseResponses). All are strict: they
// refuse a top-level key given twice in two letter cases and a "stream"
// that is not a boolean, with 400, so that no backend reads a request
// other than the one admitted. An empty body is refused the same way. The
// parse is kept for the handler (parsedV1, chatRequestVar). st is the
// request's state.
func probeBody(w http.ResponseWriter, r *http.Request, st *requestState, br *bodyReader, m billing.BodyMeter, prof policy.Profile) (billing.Ask, error) {
	if m == billing.ChatJSON {
		req, err := parsedBody(w, r, chatRequestVar, br, chatParser(r, chatLimits(prof)))
		if err != nil {
			return billing.Ask{}, err
		}
		body := st.body
		return billing.Ask{Meter: m, BodyBytes: int64(len(body)), Model: req.Model, Stream: req.Stream, MaxTokens: req.MaxTokens}, nil
	}
	req, err := parsedV1(w, r, st, br, v1Parse(m))
	if err != nil {
		return billing.Ask{}, err
	}
	return billing.AskV1(req), nil
}
