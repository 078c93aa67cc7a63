package caddymodules

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/translator/request"
)

// bodyVar holds a request body read by one handler for the handlers after
// it (limits, meter, chat), so that it is read from the client once.
const bodyVar = "switchyard.body"

// uncountedBodyBytes is the part of every body that takes nothing from
// the memory budget: every request holds more than this of the server's
// own (buffers, goroutine, parsed headers) whatever its body, so counting
// it would not bound memory, and a body no larger costs no bookkeeping.
// A body's first buffer is at most this large; memory beyond it is taken
// from the budget as bytes arrive.
const uncountedBodyBytes = 4 << 10

// bodyBudget is the memory that request bodies read into memory may take
// together on this node, and the share of it one account may hold, so
// that no tenant's bodies, however slowly they arrive, leave the others
// none. The zero value is not usable; see newBodyBudget.
type bodyBudget struct {
	total, share int64 // bytes: the node's budget, one account's share of it

	mu       sync.Mutex
	used     int64
	accounts map[string]int64 // bytes held per account; no entry: none
}

func newBodyBudget(total, share int64) *bodyBudget {
	return &bodyBudget{total: total, share: min(share, total), accounts: make(map[string]int64)}
}

// take reserves n bytes for account, or refuses: 429 when the account
// holds its share already, 503 when the node's budget is spent.
func (b *bodyBudget) take(account string, n int64) *apierror.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	held := b.accounts[account]
	if held+n > b.share {
		return errAccountBodyShare()
	}
	if b.used+n > b.total {
		return errBodyBudget()
	}
	b.accounts[account] = held + n
	b.used += n
	return nil
}

// give returns n bytes account took.
func (b *bodyBudget) give(account string, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if held := b.accounts[account] - n; held > 0 {
		b.accounts[account] = held
	} else {
		delete(b.accounts, account)
	}
}

// held is what account holds, for tests.
func (b *bodyBudget) held(account string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accounts[account]
}

// bodyReader reads request bodies into memory for the handlers that parse
// them (the admission step, the meter, the chat handler), within the
// node's budget and a deadline.
type bodyReader struct {
	maxBytes int64         // the largest body read; larger: 413
	timeout  time.Duration // for the whole body to arrive; past it: 408
	budget   *bodyBudget
}

// read reads r's body once per request: later calls return the same
// bytes. The body is put back for handlers that read r.Body themselves,
// such as reverse_proxy.
//
// Memory is taken from the budget as bytes arrive, never for what the
// request only declares: the buffer grows when it is full and at least
// one more byte has come, and each growth is taken from the account's
// share and the node's budget first; what was taken is given back when
// the request ends, or at once when the body is refused. A declared
// length above maxBytes is refused with 413 before a byte is read. A body
// that has not arrived whole within the timeout is refused with 408
// request_timeout: the connection's read deadline ends the read that
// waits, whatever the client does.
func (br *bodyReader) read(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if b, ok := caddyhttp.GetVar(r.Context(), bodyVar).([]byte); ok {
		return b, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > br.maxBytes {
		return nil, errBodyTooLarge()
	}
	p, _ := policy.PrincipalFrom(r.Context())
	account := p.AccountID
	var held int64
	release := func() {
		br.budget.give(account, held)
		held = 0
	}
	// The most the body can be: its declared length, which the server
	// does not let it exceed, else one byte past the limit.
	ceiling := br.maxBytes + 1
	if r.ContentLength >= 0 {
		ceiling = r.ContentLength
	}
	expired, stop := br.deadline(w)

	body := make([]byte, 0, min(ceiling, uncountedBodyBytes))
	lr := io.LimitedReader{R: r.Body, N: br.maxBytes + 1}
	for {
		if len(body) == cap(body) {
			// Full: one byte says whether there is more before memory is
			// taken for it.
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
				return nil, bodyReadError(err, expired())
			}
			if int64(len(body)) >= br.maxBytes {
				release()
				return nil, errBodyTooLarge()
			}
			grown := max(min(2*int64(cap(body)), ceiling), int64(len(body))+1)
			if e := br.budget.take(account, grown-uncountedBodyBytes-held); e != nil {
				release()
				return nil, e
			}
			held = grown - uncountedBodyBytes
			body = append(make([]byte, 0, grown), body...)
			body = append(body, one[0])
			continue
		}
		n, err := lr.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && expired() {
			err = os.ErrDeadlineExceeded
		}
		if err != nil {
			release()
			return nil, bodyReadError(err, expired())
		}
	}
	if int64(len(body)) > br.maxBytes {
		release()
		return nil, errBodyTooLarge()
	}
	// Cleared only once the body is read whole: the refusals above leave
	// it to dropUnread.
	stop()
	if held > 0 {
		// The body stays in memory until the request ends.
		n := held
		context.AfterFunc(r.Context(), func() { br.budget.give(account, n) })
	}
	r.Body = newReadBody(body)
	caddyhttp.SetVar(r.Context(), bodyVar, body)
	return body, nil
}

// deadline sets the connection's read deadline to the body timeout from
// now; stop clears it again. Where the connection takes no deadline (a
// writer that hides it), expired tells between reads that the time is up,
// and the server's own read timeout bounds a read that waits.
func (br *bodyReader) deadline(w http.ResponseWriter) (expired func() bool, stop func()) {
	at := time.Now().Add(br.timeout)
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(at) != nil {
		return func() bool { return time.Now().After(at) }, func() {}
	}
	return func() bool { return time.Now().After(at) }, func() { _ = rc.SetReadDeadline(time.Time{}) }
}

// unreadBodyGrace bounds how long the server may go on reading the body
// of a request refused before its body was read whole.
const unreadBodyGrace = time.Second

// dropUnread bounds what the server does with the body of a request
// refused before its body was read whole. Go's server reads up to 256 KiB
// of it, before writing the answer, to keep the connection: a client
// still sending gets its answer and, past that, a closed connection
// without a reset that would lose the answer; one that stalls would hold
// the answer until the server's read timeout. The connection's read
// deadline is set unreadBodyGrace from now, so that no refusal waits
// longer for a body nobody will use.
func dropUnread(w http.ResponseWriter, r *http.Request) {
	if !hasBody(r) {
		return
	}
	if _, read := caddyhttp.GetVar(r.Context(), bodyVar).([]byte); read {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(unreadBodyGrace))
}

// bodyReadError is the answer to a body that could not be read: 408 when
// its time was up, else 400 (the client went away, or sent a malformed
// chunk).
func bodyReadError(err error, expired bool) *apierror.Error {
	if expired || errors.Is(err, os.ErrDeadlineExceeded) {
		e := apierror.New(http.StatusRequestTimeout, apierror.TypeInvalidRequest, "request_timeout",
			"The request body did not arrive in time.")
		return e
	}
	return apierror.InvalidRequest("invalid_body", "The request body could not be read.")
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

func errBodyTooLarge() *apierror.Error {
	return apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest,
		"request_too_large", "The request body is larger than this endpoint accepts.")
}

func errBodyBudget() *apierror.Error {
	e := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "server_overloaded",
		"The gateway is holding as many large request bodies as it may. Retry shortly.")
	e.RetryAfter = 1
	return e
}

func errAccountBodyShare() *apierror.Error {
	return apierror.RateLimited("This account's requests in flight hold as much request body memory as one account may. "+
		"Retry when they finish.", 1)
}

// hasBody reports whether r carries a body: one of declared length above
// zero, or of unknown length.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// Parses handed from the admission step to the handler that serves the
// request, so that a body is decoded once.
const (
	// v1RequestVar holds the billing.V1Request of a /v1 body, for the meter.
	v1RequestVar = "switchyard.v1_request"
	// chatRequestVar holds the *request.Request of a /v3 chat body, for
	// switchyard_chat.
	chatRequestVar = "switchyard.chat_request"
)

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
	body, err := br.read(w, r)
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
// parse is kept for the handler (v1RequestVar, chatRequestVar).
func probeBody(w http.ResponseWriter, r *http.Request, br *bodyReader, m billing.BodyMeter, prof policy.Profile) (billing.Ask, error) {
	if m == billing.ChatJSON {
		req, err := parsedBody(w, r, chatRequestVar, br, chatParser(r, chatLimits(prof)))
		if err != nil {
			return billing.Ask{}, err
		}
		body, _ := caddyhttp.GetVar(r.Context(), bodyVar).([]byte)
		return billing.Ask{Meter: m, BodyBytes: int64(len(body)), Model: req.Model, Stream: req.Stream, MaxTokens: req.MaxTokens}, nil
	}
	req, err := parsedBody(w, r, v1RequestVar, br, v1Parse(m))
	if err != nil {
		return billing.Ask{}, err
	}
	return billing.AskV1(req), nil
}
