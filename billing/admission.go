package billing

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/mediatype"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// A BodyMeter is how the gateway accounts for the requests of a route: which
// request bodies it reads, and whether they are charged. A route is
// served only when its meter can account for the request; a body its
// meter does not read is refused (Accepts), never passed on unread.
type BodyMeter uint8

const (
	// NoBody is a route that takes no request body and costs nothing:
	// listing models, reading, downloading and deleting files (GET, HEAD,
	// DELETE, OPTIONS). A body sent to one is refused.
	NoBody BodyMeter = iota
	// V1JSON is a /v1 JSON body, read by ParseV1 and charged per token
	// from the usage the backend reports (Meter, V1Record).
	V1JSON
	// ChatJSON is the /v3 chat body (or the /v3 Responses body), JSON read
	// by translator/request and charged per token over every round of the
	// tool loop.
	ChatJSON
	// Upload is a Files API upload: multipart/form-data, streamed
	// to the blob store by the files service and counted against the
	// account's storage quota. Storage has no fee (spec section 8).
	Upload
	// V1Responses is a /v1 Responses API body (POST /v1/responses), read
	// by ParseResponses and charged per token from the input_tokens and
	// output_tokens the backend reports, like V1JSON. It differs from
	// V1JSON in what its parse accepts and sends on (the body unchanged:
	// a Responses stream always ends with its usage) and in what its
	// prompt estimate counts.
	V1Responses
)

func (m BodyMeter) String() string {
	switch m {
	case NoBody:
		return "none"
	case V1JSON:
		return "v1"
	case ChatJSON:
		return "chat"
	case Upload:
		return "upload"
	case V1Responses:
		return "responses"
	}
	return "unknown"
}

// Chargeable reports whether the requests of the route can be charged
// for, and so must pass the balance gate. It depends on the route alone,
// never on how the request labels its body.
func (m BodyMeter) Chargeable() bool { return m == V1JSON || m == ChatJSON || m == V1Responses }

// ReadsBody reports whether the route's body is read into memory before
// the request is admitted: to learn whether it streams and what it may
// cost. An upload streams to the blob store instead.
func (m BodyMeter) ReadsBody() bool { return m == V1JSON || m == ChatJSON || m == V1Responses }

// PassThrough reports whether the route's body goes on to a /v1 backend,
// read by the meter (ParseV1 or ParseResponses) rather than by a handler
// of the gateway's own.
func (m BodyMeter) PassThrough() bool { return m == V1JSON || m == V1Responses }

// Accepts reports whether the meter reads a body labelled contentType:
// JSON (mediatype.IsJSON) for the metered routes, multipart/form-data for
// uploads, nothing for a route without a body.
func (m BodyMeter) Accepts(contentType string) bool {
	switch m {
	case V1JSON, ChatJSON, V1Responses:
		return mediatype.IsJSON(contentType)
	case Upload:
		return mediatype.IsFormData(contentType)
	}
	return false
}

// V1Routes are the /v1 routes a meter exists for, as "METHOD /path"
// below the API prefix ("/*": anything below), with their meter. A
// switchyard_proxy route that takes a body must be one of them. Adding a
// JSON route that reports prompt_tokens/completion_tokens or
// input_tokens/output_tokens is one entry, once Meter reads its answers'
// usage, streams included. The Responses API's routes that read or change
// responses stored at the backend (GET, DELETE /responses/{id}, cancel,
// input_items) have no entry: the backend's store is the operator's
// account, shared by every tenant of the gateway.
var V1Routes = map[string]BodyMeter{
	"POST /chat/completions": V1JSON,
	"POST /completions":      V1JSON,
	"POST /embeddings":       V1JSON,
	"POST /responses":        V1Responses,
	"GET /models":            NoBody,
	"GET /models/*":          NoBody,
}

// bodyless are the methods whose requests carry no body the gateway
// meters: a route of one of them is NoBody unless V1Routes says more.
func bodyless(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// MethodMeter is the meter a request's method implies where nothing else
// is known of its route: none for GET, HEAD, DELETE and OPTIONS, a /v1
// JSON body for every other method, spelt in any case.
func MethodMeter(method string) BodyMeter {
	if bodyless(method) {
		return NoBody
	}
	return V1JSON
}

// V1RouteMeter is the meter of a /v1 route, "METHOD /path" as in
// V1Routes, and false for a route that takes a body no meter reads.
func V1RouteMeter(route string) (BodyMeter, bool) {
	if m, ok := V1Routes[route]; ok {
		return m, true
	}
	method, _, _ := strings.Cut(route, " ")
	return NoBody, bodyless(method)
}

// CheckV1Route refuses a route of the /v1 pass-through that is not
// "METHOD /path", or whose body no meter reads, so that it could not be
// billed.
func CheckV1Route(route string) error {
	m, p, ok := strings.Cut(route, " ")
	if !ok || m == "" || m != strings.ToUpper(m) || !strings.HasPrefix(p, "/") {
		return fmt.Errorf("route %q: want METHOD /path", route)
	}
	if _, ok := V1RouteMeter(route); !ok {
		return fmt.Errorf("route %q: no meter reads its body, so it could not be billed; "+
			"routes of methods with a body are limited to %s", route, strings.Join(meteredV1Routes(), ", "))
	}
	return nil
}

// meteredV1Routes lists the routes of V1Routes that take a body, sorted,
// for the error of a route none reads.
func meteredV1Routes() []string {
	var out []string
	for r, m := range V1Routes {
		if m != NoBody {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Routes tells the meter of a request from its method and path, for the
// admission step in front of every handler. The zero Routes knows no chat
// path and no uploads.
type Routes struct {
	// Chat is the /v3 chat path.
	Chat string
	// AssistantResponses is the /v3 Responses API path, read and charged
	// as the chat is.
	AssistantResponses string
	// Uploads are the paths that take Files API uploads.
	Uploads []string
	// Responses are the paths of /v1 Responses API routes (a
	// switchyard_proxy's prefix and "/responses").
	Responses []string
}

// BodyMeter is the meter of a request. Paths compare without regard to case
// or a trailing slash, as the handlers' path matchers do. A request that
// can carry a body and is neither the chat route, an upload nor a
// Responses route is read as a /v1 JSON body: what the gateway does not know it meters as the
// strictest reader, and the handler after refuses a route it does not
// serve.
func (rt Routes) BodyMeter(method, path string) BodyMeter {
	if bodyless(method) {
		return NoBody
	}
	path = strings.TrimSuffix(path, "/")
	if method == http.MethodPost {
		if rt.Chat != "" && strings.EqualFold(path, rt.Chat) ||
			rt.AssistantResponses != "" && strings.EqualFold(path, rt.AssistantResponses) {
			return ChatJSON
		}
		for _, u := range rt.Uploads {
			if strings.EqualFold(path, u) {
				return Upload
			}
		}
		for _, p := range rt.Responses {
			if strings.EqualFold(path, p) {
				return V1Responses
			}
		}
	}
	return V1JSON
}

// UnsupportedMediaType is the refusal of a body its route's meter does
// not read: 415 unsupported_media_type.
func UnsupportedMediaType(m BodyMeter, method, path string) *apierror.Error {
	msg := method + " " + clip.Ellipsis(path, 80) + " takes "
	switch m {
	case V1JSON, ChatJSON, V1Responses:
		msg += `a JSON body, sent as "Content-Type: application/json" (charset=utf-8 alone allowed), without Content-Encoding.`
	case Upload:
		msg += `a "multipart/form-data" body, without Content-Encoding.`
	default:
		msg += "no request body."
	}
	return apierror.New(http.StatusUnsupportedMediaType, apierror.TypeInvalidRequest, "unsupported_media_type", msg)
}

// CheckBody refuses, with UnsupportedMediaType, a request body that m
// does not read: a Content-Type it does not accept, any Content-Encoding
// but identity (the meter reads the bytes as sent), or any body at all
// on a route without one. hasBody tells whether the request carries a
// body.
func CheckBody(m BodyMeter, method, path string, header http.Header, hasBody bool) *apierror.Error {
	if !hasBody {
		return nil
	}
	if m == NoBody || !m.Accepts(header.Get("Content-Type")) || len(header.Values("Content-Type")) > 1 {
		return UnsupportedMediaType(m, method, path)
	}
	for _, enc := range header.Values("Content-Encoding") {
		if !strings.EqualFold(strings.TrimSpace(enc), "identity") {
			return UnsupportedMediaType(m, method, path)
		}
	}
	return nil
}

// CheckQuery refuses, with 400 unsupported_parameter, a query string on
// a request that m reads as a /v1 JSON body: the meter reads the body
// alone, and a backend that took parameters from the query would serve
// a request other than the one admitted and metered. OpenAI's routes that
// take a JSON body take no query parameters; a client that sends one is
// told rather than having it dropped. The gateway's own routes (the /v3
// chat, uploads) and the routes without a body read no query upstream.
// An empty query ("?" alone) passes.
func CheckQuery(m BodyMeter, method, path, rawQuery string) *apierror.Error {
	if !m.PassThrough() || rawQuery == "" {
		return nil
	}
	return apierror.InvalidRequest("unsupported_parameter", method+" "+clip.Ellipsis(path, 80)+
		" takes its parameters in its JSON body, not in the query string (found \""+clip.Ellipsis(rawQuery, 80)+"\").")
}

// Ask is what the admission after the body needs to know of a request:
// its meter and what the one strict parse of its body found.
type Ask struct {
	Meter     BodyMeter
	BodyBytes int64
	Model     string
	Stream    bool
	MaxTokens int64
}

// AskV1 is the Ask of a /v1 request whose body ParseV1 (or, on a
// Responses route, ParseResponses) read.
func AskV1(req V1Request) Ask {
	m := V1JSON
	if req.Responses {
		m = V1Responses
	}
	return Ask{
		Meter:     m,
		BodyBytes: int64(len(req.Body)),
		Model:     req.Model,
		Stream:    req.Stream,
		MaxTokens: req.MaxTokens,
	}
}

// BeforeBody is the limiter's question for a request of p under prof
// before its body is read: the key's request rate (its own when lower
// than the profile's) and, on a chargeable
// route, whether the account's available balance covers the minimum
// charge (a check that holds nothing, limits.Reservation.CheckOnly). The
// admission step asks it of limits.Prechecker, which answers from what
// the node knows without a round trip, before reading a body; and of
// Admit for a request with no body to read, whose admission it is. An
// account that cannot pay spends no rate.
func BeforeBody(prof policy.Profile, p policy.Principal, m BodyMeter) limits.AdmitRequest {
	req := limits.AdmitRequest{Key: p.KeyID, Account: p.AccountID, Rate: keyRate(prof, p)}
	if m.Chargeable() {
		req.Reserve = limits.Reservation{
			Account:   p.AccountID,
			Balance:   p.BalanceCents,
			Min:       prof.MinChargeCents,
			CheckOnly: true,
			KeySpend:  keySpend(p),
		}
	}
	return req
}

// AfterBody is the limiter's question once the body is read and parsed,
// the one Admit (one Redis round trip) of a request with a body: the
// key's request rate, one of its stream slots when it asks for a stream,
// and on a chargeable route a hold of its estimated cost (HoldEstimate at
// the hold prices of its model, ForHold) against the account's balance,
// in one step. A refusal by any of them spends nothing of the others.
// ok is false when there is nothing to ask.
func AfterBody(prof policy.Profile, p policy.Principal, ask Ask) (req limits.AdmitRequest, ok bool) {
	req = limits.AdmitRequest{
		Key:         p.KeyID,
		Account:     p.AccountID,
		Rate:        keyRate(prof, p),
		StreamLimit: keyStreams(prof, p),
		WantLease:   ask.Stream,
	}
	if ask.Meter.Chargeable() {
		req.Reserve = limits.Reservation{
			Account:  p.AccountID,
			Balance:  p.BalanceCents,
			Want:     HoldEstimate(prof.ForHold(ask.Model), ask.BodyBytes, ask.MaxTokens, DefaultHoldTokens),
			Min:      prof.MinChargeCents,
			KeySpend: keySpend(p),
		}
	}
	return req, req.Rate.Enabled() || req.WantLease || req.Reserve.Account != ""
}

// Refusal is the client's error for an error of the limiter's Admit: 402
// insufficient_balance, telling a balance held by requests in flight from
// one spent, for a *limits.BalanceError, else limits.APIError.
func Refusal(err error, balanceCents int64) *apierror.Error {
	if be, ok := errors.AsType[*limits.BalanceError](err); ok {
		msg := "Your balance of " + FormatCents(balanceCents) + " does not cover a request. Top up to continue."
		if be.Available < balanceCents {
			// The rest is held by the account's requests in flight.
			msg = "Your balance of " + FormatCents(balanceCents) + " is held by requests in flight (" +
				FormatCents(max(be.Available, 0)) + " available). Retry when they finish, or top up."
		}
		return apierror.InsufficientBalance(msg)
	}
	return limits.APIError(err)
}
