package caddymodules

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"golang.org/x/sync/semaphore"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/mediatype"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/translator/request"
)

// bodyVar holds a request body read by one handler for the handlers after
// it (limits, meter, chat), so that it is read from the client once.
const bodyVar = "switchyard.body"

// bodyChunk is the step in which a body read into memory takes its share
// of the memory budget, so that a body of unknown length takes only what
// it uses.
const bodyChunk = 256 << 10

// unsizedBodyStart is the first buffer of a body sent without a length.
const unsizedBodyStart = 16 << 10

// uncountedBodyBytes is the largest declared body that takes nothing from
// the memory budget: every request holds more than this of the server's
// own (buffers, goroutine, parsed headers) whatever its body, so counting
// it would not bound memory, and giving it back costs each request a
// callback on its context.
const uncountedBodyBytes = 4 << 10

// requestBody reads the request body, at most maxBytes of it, once per
// request: later calls return the same bytes. The body is put back for
// handlers that read r.Body themselves, such as reverse_proxy.
//
// Every body held in memory, but for one declared no larger than
// uncountedBodyBytes, takes its size from budget until its request ends,
// so that many large bodies at once cannot exhaust the process's memory:
// when the budget is spent, the request is refused with 503
// server_overloaded and Retry-After, before more of it is read.
func requestBody(r *http.Request, maxBytes int64, budget *semaphore.Weighted) ([]byte, error) {
	if b, ok := caddyhttp.GetVar(r.Context(), bodyVar).([]byte); ok {
		return b, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength >= 0 && r.ContentLength <= uncountedBodyBytes {
		budget = nil
	}
	var held int64
	release := func() {
		if held > 0 {
			budget.Release(held)
			held = 0
		}
	}
	take := func(n int64) bool {
		if budget == nil {
			return true
		}
		if !budget.TryAcquire(n) {
			return false
		}
		held += n
		return true
	}
	size := int64(bodyChunk)
	if r.ContentLength > 0 {
		size = min(r.ContentLength, maxBytes+1)
	}
	if !take(size) {
		return nil, errBodyBudget()
	}
	// A body of a declared length is read into a buffer of that length,
	// once; one of unknown length starts small and grows.
	first := size
	if r.ContentLength <= 0 {
		first = min(size, unsizedBodyStart)
	}
	body := make([]byte, 0, first)
	lr := io.LimitedReader{R: r.Body, N: maxBytes + 1}
	for {
		room := cap(body)
		if budget != nil {
			room = min(room, int(held))
		}
		if len(body) == room {
			// Full, as far as memory or budget go: one byte says whether
			// there is more before either is taken for it.
			var one [1]byte
			n, err := lr.Read(one[:])
			for n == 0 && err == nil {
				n, err = lr.Read(one[:])
			}
			if n == 0 {
				if errors.Is(err, io.EOF) {
					break
				}
				release()
				return nil, errUnreadableBody()
			}
			if int64(len(body)) >= held && budget != nil && !take(bodyChunk) {
				release()
				return nil, errBodyBudget()
			}
			body = append(body, one[0])
			continue
		}
		n, err := lr.Read(body[len(body):room])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			release()
			return nil, errUnreadableBody()
		}
	}
	if int64(len(body)) > maxBytes {
		release()
		return nil, apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest,
			"request_too_large", "The request body is larger than this endpoint accepts.")
	}
	if budget != nil {
		// Hand back what was taken but not used, and the rest when the
		// request ends: the body stays in memory until then.
		if unused := held - int64(len(body)); unused > 0 {
			budget.Release(unused)
			held -= unused
		}
		n := held
		context.AfterFunc(r.Context(), func() { budget.Release(n) })
	}
	r.Body = newReadBody(body)
	caddyhttp.SetVar(r.Context(), bodyVar, body)
	return body, nil
}

// readBody gives a request the body already read from it, in one
// allocation where io.NopCloser(bytes.NewReader(body)) takes two.
type readBody struct{ bytes.Reader }

func newReadBody(body []byte) *readBody {
	b := new(readBody)
	b.Reset(body)
	return b
}

func (*readBody) Close() error { return nil }

func errUnreadableBody() *apierror.Error {
	return apierror.InvalidRequest("invalid_body", "The request body could not be read.")
}

func errBodyBudget() *apierror.Error {
	e := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "server_overloaded",
		"The gateway is holding as many large request bodies as it may. Retry shortly.")
	e.RetryAfter = 1
	return e
}

// Parses handed from the limits probe to the handler that serves the
// request, so that a body is decoded once.
const (
	// v1RequestVar holds the billing.V1Request of a /v1 body, for the meter.
	v1RequestVar = "switchyard.v1_request"
	// chatRequestVar holds the *request.Request of a /v3 chat body, for
	// switchyard_chat.
	chatRequestVar = "switchyard.chat_request"
)

// parsedBody is the parse of r's body that a handler in front kept under
// key (the limits probe, the meter), else the body read, at most
// maxBytes of it from budget, and parsed here, then kept under key for
// the handlers after this one: a body is decoded once a request.
func parsedBody[T any](r *http.Request, key string, maxBytes int64, budget *semaphore.Weighted,
	parse func([]byte) (T, error)) (T, error) {
	if v, ok := caddyhttp.GetVar(r.Context(), key).(T); ok {
		return v, nil
	}
	body, err := requestBody(r, maxBytes, budget)
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

// chatPath is the /v3 route whose body the probe parses as the chat
// handler does.
const chatPath = "/v3/chat/completions"

// chatLimits are the bounds of a /v3 chat body, the same for the probe and
// the chat handler: strict, so that the probe's parse is the handler's.
func chatLimits(prof policy.Profile) request.Limits {
	return request.Limits{Profile: prof, Strict: true}
}

// probeBody reads a POST body to learn whether it asks for a stream and
// how much it may cost, with a strict parse whatever its Content-Type: a
// body that parses one way here and another way further on could hold a
// stream without a slot. A /v3 chat body is parsed by request.Parse (with
// chatLimits), anything else by billing.ParseV1; both refuse a top-level
// key given twice in two letter cases and a "stream" that is not a
// boolean, here, with 400, before anything is admitted. The parse is kept
// for the handler (v1RequestVar, chatRequestVar). Multipart uploads are
// not streams and are not read; they, and requests without a body, ask
// for no stream and hold the minimum charge when chargeable.
func probeBody(r *http.Request, maxBytes int64, budget *semaphore.Weighted, prof policy.Profile) (billing.Ask, error) {
	ask := billing.Ask{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type")}
	if r.Body == nil || r.Body == http.NoBody || r.Method != http.MethodPost {
		return ask, nil
	}
	if strings.HasPrefix(mediatype.Of(ask.ContentType), "multipart/") {
		return ask, nil
	}
	body, err := requestBody(r, maxBytes, budget)
	if err != nil || len(body) == 0 {
		return ask, err
	}
	if strings.TrimSuffix(r.URL.Path, "/") == chatPath {
		req, err := request.Parse(body, r.Header, chatLimits(prof))
		if err != nil {
			return ask, err
		}
		caddyhttp.SetVar(r.Context(), chatRequestVar, req)
		ask.HasBody, ask.BodyBytes = true, int64(len(body))
		ask.Model, ask.Stream, ask.MaxTokens = req.Model, req.Stream, req.MaxTokens
		return ask, nil
	}
	req, err := billing.ParseV1(body)
	if err != nil {
		return ask, err
	}
	caddyhttp.SetVar(r.Context(), v1RequestVar, req)
	return billing.AskV1(ask.Method, ask.Path, ask.ContentType, req), nil
}
