// Package apierror is the one place that writes the client-visible error
// envelope {"error":{"message","type","code"}}, as a plain JSON response or
// as the last frame of a server-sent-event stream.
//
// The type values follow what OpenAI answers for the same situation, so
// that OpenAI SDKs classify Switchyard's errors the way they classify
// OpenAI's. docs/errors.md lists every code in use.
package apierror

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// Types, as OpenAI spells them.
const (
	TypeInvalidRequest    = "invalid_request_error"
	TypeRateLimit         = "requests"
	TypeInsufficientQuota = "insufficient_quota"
	TypeServer            = "server_error"
	// The admin API's: a token that does not authenticate, and one that
	// does but may not do what it asks.
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
)

// Error is a client-visible error. It implements error so that it can
// travel through ordinary Go error returns and be recognised with errors.As
// at the edge.
type Error struct {
	Status  int    // HTTP status
	Type    string // OpenAI error type
	Code    string // Switchyard error code (docs/errors.md)
	Message string // human-readable, safe to show the caller
	// RetryAfter, when positive, is sent as the Retry-After header in
	// whole seconds.
	RetryAfter int
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New returns an error with the given parts.
func New(status int, typ, code, message string) *Error {
	return &Error{Status: status, Type: typ, Code: code, Message: message}
}

// Constructors for the codes the spec names.

func InvalidAPIKey(message string) *Error {
	return New(http.StatusUnauthorized, TypeInvalidRequest, "invalid_api_key", message)
}

func InsufficientBalance(message string) *Error {
	return New(http.StatusPaymentRequired, TypeInsufficientQuota, "insufficient_balance", message)
}

func RateLimited(message string, retryAfterSeconds int) *Error {
	e := New(http.StatusTooManyRequests, TypeRateLimit, "rate_limit_exceeded", message)
	e.RetryAfter = retryAfterSeconds
	return e
}

func InvalidRequest(code, message string) *Error {
	return New(http.StatusBadRequest, TypeInvalidRequest, code, message)
}

func NotFound(message string) *Error {
	return New(http.StatusNotFound, TypeInvalidRequest, "not_found", message)
}

func Internal() *Error {
	return New(http.StatusInternalServerError, TypeServer, "internal_error",
		"The server had an error while processing your request. Retry with backoff.")
}

// From returns err as an *Error. Anything that is not one becomes
// internal_error: its text may hold details the caller must not see.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal()
}

type envelope struct {
	Error body `json:"error"`
}

type body struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

// JSON is the envelope's encoding.
func (e *Error) JSON() []byte {
	b, _ := json.Marshal(envelope{body{Message: e.Message, Type: e.Type, Code: e.Code}})
	return b
}

// Write answers with err's envelope. Headers already set on w, such as
// rate-limit headers, are kept. A CodeRecorder among w and the writers
// it wraps is told the envelope's code first.
func Write(w http.ResponseWriter, err error) {
	e := From(err)
	recordCode(w, e.Code)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(e.JSON(), '\n'))
}

// WriteSSE ends an event stream whose headers are already sent with
// err's envelope as a data frame followed by [DONE], and flushes.
func WriteSSE(w http.ResponseWriter, err error) error {
	buf := make([]byte, 0, 256)
	buf = append(buf, "data: "...)
	buf = append(buf, From(err).JSON()...)
	buf = append(buf, "\n\ndata: [DONE]\n\n"...)
	if _, werr := w.Write(buf); werr != nil {
		return werr
	}
	return http.NewResponseController(w).Flush()
}

// CodeRecorder is a writer that wants to know the code of the envelope
// Write answers with, so that what counts the answers (metrics, the
// access log) need not parse back the JSON just written. Write finds it
// through the Unwrap methods of the writers that wrap it, as
// http.ResponseController does. The code comes before the status; a
// later envelope's code replaces an earlier one's.
type CodeRecorder interface {
	RecordErrorCode(code string)
}

func recordCode(w http.ResponseWriter, code string) {
	for {
		if r, ok := w.(CodeRecorder); ok {
			r.RecordErrorCode(code)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}
