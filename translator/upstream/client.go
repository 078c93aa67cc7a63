package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/internal/bodyconn"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/internal/jsonstr"
	"github.com/switchyardhq/switchyard/internal/sse"
)

// Defaults of Config.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 120 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
	// DefaultMaxArgumentBytes bounds the tool-call arguments of one
	// round: room for a few documents at the renderers' 1 MiB Markdown
	// limit, escaped as JSON.
	DefaultMaxArgumentBytes = 8 << 20
)

// Config configures the client of the OpenAI-compatible backend.
type Config struct {
	// BaseURL is the backend's base address including the version
	// segment, such as "http://127.0.0.1:8000/v1"; "/chat/completions"
	// is appended. Required unless Router is set.
	BaseURL string
	// Router, when set, sends each call to the pools configured for the
	// request's model instead of BaseURL, trying the model's fallbacks
	// in order when a pool fails before its answer starts. BaseURL,
	// APIKey, Model and DiscoverModel are then unused. Default: nil.
	Router Router
	// OnFallback, when set, is told each time a call moves on from the
	// pool of model from to that of model to. Default: nil.
	OnFallback func(from, to string)
	// APIKey, when set, is sent as "Authorization: Bearer APIKEY".
	// Default: empty, no Authorization header.
	APIKey string
	// Model is the model name sent upstream. Default: empty, which sends
	// the model string of the client's request unchanged, or the
	// discovered one with DiscoverModel.
	Model string
	// DiscoverModel, when Model is empty, sends the first model the
	// backend lists at GET {BaseURL}/models, asked on first use (not at
	// start) and then kept. Default: false.
	DiscoverModel bool
	// DiscoveryTimeout bounds one GET /models. Default:
	// DefaultDiscoveryTimeout.
	DiscoveryTimeout time.Duration
	// ConnectTimeout bounds dialing and the TLS handshake.
	// Default: DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the time from sending a request to the
	// first event of its stream: queueing and prompt processing of the
	// backend. Default: DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the silence between two events of a stream.
	// Default: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxArgumentBytes bounds the tool-call arguments of one round, all
	// calls together; a round that streams more fails as a broken
	// answer. Default: DefaultMaxArgumentBytes.
	MaxArgumentBytes int
	// HTTPClient sends the requests. Its Timeout must be zero, since a
	// stream may rightly last long; the timeouts above apply instead.
	// Default: a client owned by the Client, reusing connections (up to
	// 64 idle per host: a gateway talks to few hosts, many times over).
	HTTPClient *http.Client
}

// Client is the client of one OpenAI-compatible backend. It is safe for
// concurrent use and meant to be shared, so that connections are reused.
type Client struct {
	router     Router
	onFallback func(from, to string)
	url        string
	apiKey     string
	model      string
	firstByte  time.Duration
	idle       time.Duration
	maxArgs    int
	client     *http.Client
	ownsClient bool
	discovery  *discovery // nil unless the model is discovered

	// round is every round's request but for its context and body, and
	// header its headers. All rounds share them, since neither a
	// transport nor the pools write to a request (a RoundTripper must
	// not; the pools copy what they change): a round's own parsed URL
	// and header map took about 600 bytes, kept for as long as its
	// answer streamed.
	round  *http.Request
	header http.Header

	// afterFunc arms the stream watchdog; tests replace it to fire
	// timeouts without waiting.
	afterFunc func(d time.Duration, f func()) watchdogTimer
}

type watchdogTimer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// The buffers of the client's own transport, which a connection keeps
// for as long as it is open, for the whole of a stream: with the
// transport's 4 KiB each, every idle stream kept 6 KiB more.
//
// headWriteBuffer holds a request's line and headers, about 300 bytes:
// a body reaches the connection past it (the transport flushes the
// headers first for a body of the client's, then hands the body to
// bodyconn.Conn's ReadFrom). Longer headers still go out whole, in more
// writes.
//
// readBuffer holds what a read of the answer brought in beyond what was
// asked for. A stream's events are a few hundred bytes each and come
// one by one as the model writes them; a read into the stream's own
// buffer (internal/sse, 4 KiB and more) bypasses this one when it is
// empty. Only a burst of events is read in more pieces: 2,000 events of
// 127 bytes written at once cost about 0.1 µs more each than with 4 KiB,
// 1.36 → 1.47 µs with the backend's own work (BenchmarkStreamBurst).
const (
	headWriteBuffer = 1 << 10
	readBuffer      = 1 << 10
)

// New returns a client for the backend at cfg.BaseURL.
func New(cfg Config) (*Client, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Router != nil && base == "" {
		base = routedBase
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("upstream base URL %q: want http:// or https://", cfg.BaseURL)
	}
	u := &Client{
		router:     cfg.Router,
		onFallback: cfg.OnFallback,
		url:        base + "/chat/completions",
		apiKey:     cfg.APIKey,
		model:      cfg.Model,
		firstByte:  orDefault(cfg.FirstByteTimeout, DefaultFirstByteTimeout),
		idle:       orDefault(cfg.IdleTimeout, DefaultIdleTimeout),
		maxArgs:    orDefault(cfg.MaxArgumentBytes, DefaultMaxArgumentBytes),
		client:     cfg.HTTPClient,
		afterFunc:  func(d time.Duration, f func()) watchdogTimer { return time.AfterFunc(d, f) },
	}
	round, err := http.NewRequest(http.MethodPost, u.url, nil)
	if err != nil {
		return nil, fmt.Errorf("upstream base URL %q: %v", cfg.BaseURL, err)
	}
	u.round = round
	u.header = http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}
	if u.apiKey != "" && u.router == nil {
		u.header.Set("Authorization", "Bearer "+u.apiKey)
	}
	if cfg.Model == "" && cfg.DiscoverModel {
		u.discovery = &discovery{url: base + "/models", timeout: orDefault(cfg.DiscoveryTimeout, DefaultDiscoveryTimeout)}
	}
	if u.client == nil {
		connect := orDefault(cfg.ConnectTimeout, DefaultConnectTimeout)
		u.client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           bodyconn.Dial((&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext),
			WriteBufferSize:       headWriteBuffer,
			ReadBufferSize:        readBuffer,
			TLSHandshakeTimeout:   connect,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   64,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
			ForceAttemptHTTP2:     true,
			// Compression would make the transport buffer a stream that
			// must flow token by token.
			DisableCompression: true,
		}}
		u.ownsClient = true
	}
	return u, nil
}

// Close releases idle connections of a client the Client created.
func (u *Client) Close() {
	if u.ownsClient {
		u.client.CloseIdleConnections()
	}
}

func orDefault[T time.Duration | int](d, def T) T {
	if d > 0 {
		return d
	}
	return def
}

// Request is one round of the conversation sent to the backend.
type Request struct {
	Model string // used when Config.Model is empty
	// Messages is the conversation so far, encoded as it grew.
	Messages Conversation
	Tools    []ToolDefinition
	// ToolsJSON, when not nil, is Tools as EncodeTools writes them,
	// which the body then sends as they are, shared and never changed:
	// the schemas are most of a short chat's body, the same for every
	// request offered the same tools.
	ToolsJSON []byte
	// Sampling parameters set by the client, passed through.
	Sampling map[string]json.RawMessage
}

// Message is a message in OpenAI's wire form.
type Message struct {
	Role string
	// Content is the message's text, sent as a string unless Parts is
	// set.
	Content string
	// Parts, when not nil, is sent as the content instead of Content:
	// the text and images of a message that carries images.
	Parts      []Part
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// Part is a content part in OpenAI's wire form.
type Part struct {
	Type     string // "text" or "image_url"
	Text     string
	ImageURL *ImageURL
}

// ImageURL is an image sent as the data URL
// data:<MIME>;base64,<Base64>. It is kept in its parts so that the
// image's base64, most of a request that carries one, goes into the
// body as it came, never copied into a URL string first.
type ImageURL struct {
	MIME string
	// Base64 is the image in standard base64 with padding.
	Base64 string
}

// ToolCall is a tool call in an assistant message.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"` // "function"
	Function Function `json:"function"`
}

// Function is the function part of a tool call.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolDefinition is a tool offered to the backend.
type ToolDefinition struct {
	Type     string       `json:"type"` // "function"
	Function FunctionSpec `json:"function"`
}

// FunctionSpec describes a function tool.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Error is a failure of the backend or of the way to it.
type Error struct {
	// Status is the backend's HTTP status; 0 when it sent none.
	Status int
	// Message is the backend's error text or a description of the
	// failure, for logs and, for 4xx refusals, for the client.
	Message string
	// Timeout is set when a FirstByteTimeout or IdleTimeout elapsed.
	Timeout bool
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := "upstream: "
	if e.Status != 0 {
		s += fmt.Sprintf("status %d: ", e.Status)
	}
	s += e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

var (
	errFirstByteTimeout = errors.New("no answer within the first-byte timeout")
	errIdleTimeout      = errors.New("stream idle for longer than the idle timeout")
)

// Stream sends one round and returns its stream. The request is
// cancelled when ctx ends or the stream is closed. Errors are
// *Error unless ctx ended first, which returns ctx's error.
//
// With a Router, a pool that fails before its answer starts (it could
// not be reached, or answered 5xx or 429 on every backend it tried) is
// followed by the model's next fallback, all within FirstByteTimeout;
// once Stream returned, nothing is retried.
func (u *Client) Stream(ctx context.Context, req Request) (*Stream, error) {
	var one [1]target
	targets, err := u.targets(ctx, req, &one)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	timer := u.afterFunc(u.firstByte, func() { cancel(errFirstByteTimeout) })
	var last error
	for i, t := range targets {
		resp, err := u.send(ctx, t, req)
		if err == nil {
			s := &Stream{
				resp:     resp,
				ctx:      ctx,
				cancel:   cancel,
				timer:    timer,
				idle:     u.idle,
				calls:    toolCallAccumulator{max: u.maxArgs},
				request:  req,
				isJSON:   strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"),
				upstream: u,
				served:   Served{Model: t.served, Upstream: resp.Header.Get(UpstreamHeader), Fallbacks: i},
			}
			if !s.isJSON {
				s.sse = sse.NewReader(resp.Body, 0)
			}
			return s, nil
		}
		last = err
		if i == len(targets)-1 || !retryable(err) || ctx.Err() != nil {
			break
		}
		if u.onFallback != nil {
			u.onFallback(t.served, targets[i+1].served)
		}
	}
	timer.Stop()
	cancel(nil)
	return nil, last
}

// routedBase stands for the base URL of a Router's pools, which are
// reached through their Transport and not by address.
const routedBase = "http://pool.switchyard.invalid"

// target is one place a round may be sent: through transport when it
// is set, else through client.
type target struct {
	transport http.RoundTripper
	client    *http.Client
	model     string // sent upstream; empty sends the request's
	served    string // the configured model, with a Router
}

// targets lists where req goes, in order; the one place of a Client
// without a Router goes in one, the caller's, which spares every round
// a slice of its own.
func (u *Client) targets(ctx context.Context, req Request, one *[1]target) ([]target, error) {
	if u.router == nil {
		model := u.model
		if u.discovery != nil {
			var err error
			if model, err = u.discovery.resolve(ctx, u); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return nil, context.Cause(ctx)
				}
				return nil, err
			}
		}
		one[0] = target{client: u.client, model: model}
		if u.ownsClient {
			one[0].transport = u.client.Transport
		}
		return one[:], nil
	}
	routes, ok := u.router.Route(req.Model)
	if !ok || len(routes) == 0 {
		return nil, &Error{Status: http.StatusNotFound, Message: "model " + clip.Ellipsis(req.Model, 80), Err: ErrUnknownModel}
	}
	out := make([]target, len(routes))
	for i, r := range routes {
		rt := r.Transport
		if rt == nil {
			rt = http.DefaultTransport // as an http.Client without one sends
		}
		out[i] = target{transport: rt, model: r.Model, served: r.Model}
	}
	return out, nil
}

// send sends one round to t and returns its successful response.
//
// A round goes through the transport itself when the Client owns it or
// a Router's pool is the target: an http.Client copied every request's
// headers for redirects it might follow, and a backend's chat
// completions do not redirect (a 3xx fails the round as any status but
// 2xx does). A client given in Config.HTTPClient is used as it is.
func (u *Client) send(ctx context.Context, t target, req Request) (*http.Response, error) {
	hreq := u.round.WithContext(ctx)
	hreq.Header = u.header
	setBody(hreq, u.encode(req, t.model), func() [][]byte { return u.encode(req, t.model) })
	var resp *http.Response
	var err error
	if t.transport != nil {
		resp, err = t.transport.RoundTrip(hreq)
		switch {
		case err != nil:
		case resp == nil:
			err = errors.New("the transport returned neither a response nor an error")
		case resp.Body == nil:
			resp.Body = http.NoBody // as http.Client makes it
		}
	} else {
		resp, err = t.client.Do(hreq)
	}
	if err != nil {
		return nil, u.failure(ctx, context.Cause(ctx), err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// setBody makes body, given in pieces, the request's, each piece let go
// of once it is sent. The request stays referenced for as long as its
// answer streams (by the response and by the transport's connection), and
// a bytes.Reader would keep the round's own pieces (the tool schemas
// above all, about 5 KB) alive with it. A retry that needs the body
// again (HTTP/2 after a GOAWAY) has it encoded anew.
func setBody(r *http.Request, body [][]byte, encode func() [][]byte) {
	r.Body = &sentOnce{parts: body}
	n := 0
	for _, p := range body {
		n += len(p)
	}
	r.ContentLength = int64(n)
	r.GetBody = func() (io.ReadCloser, error) { return &sentOnce{parts: encode()}, nil }
}

// sentOnce reads its pieces once, dropping each at its end, and all of
// them when closed. The transport may close a request body while its
// writer still reads it.
type sentOnce struct {
	mu    sync.Mutex
	parts [][]byte
}

func (s *sentOnce) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(p) && len(s.parts) > 0 {
		c := copy(p[n:], s.parts[0])
		n += c
		if s.parts[0] = s.parts[0][c:]; len(s.parts[0]) == 0 {
			s.parts[0] = nil
			s.parts = s.parts[1:]
		}
	}
	if len(s.parts) == 0 {
		s.parts = nil
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
	}
	return n, nil
}

func (s *sentOnce) Close() error {
	s.mu.Lock()
	s.parts = nil
	s.mu.Unlock()
	return nil
}

// failure describes err, which happened while ctx was alive or after it
// was cancelled with cause.
func (u *Client) failure(ctx context.Context, cause, err error) error {
	switch {
	case errors.Is(cause, errFirstByteTimeout):
		return &Error{Message: "timed out", Timeout: true, Err: cause}
	case errors.Is(cause, errIdleTimeout):
		return &Error{Message: "stream stalled", Timeout: true, Err: cause}
	case cause != nil:
		// The caller's context ended: the client left or the server is
		// shutting down. Not the backend's fault.
		return cause
	}
	return &Error{Message: "request failed", Err: err}
}

// encode builds the request body in three pieces: the head up to the
// messages, the messages as Conversation encoded them, once, as they were
// added, and the tail; with ToolsJSON, the tail is three pieces, the
// tools those bytes as they are. It always asks for usage in the stream: vLLM,
// llama.cpp and Ollama send none otherwise.
//
// Only the head and the tail are written per round, by hand rather than
// as one json.Marshal of a map: the tool schemas are json.RawMessage,
// which encoding/json validates and compacts again on every call, and
// they are most of the body of a short chat. They are our own schemas,
// written as they are.
func (u *Client) encode(req Request, model string) [][]byte {
	if model == "" {
		model = req.Model
	}
	if len(req.Tools) > 0 && req.ToolsJSON != nil {
		// The head and the tail share one array, the head's capacity
		// clipped so that the tail never writes over it.
		b := make([]byte, 0, len(model)+samplingSize(req.Sampling)+32)
		b = append(b, `{"model":`...)
		b = jsonstr.Append(b, model)
		b = append(b, `,"messages":[`...)
		head := b[:len(b):len(b)]
		return [][]byte{head, req.Messages.encoded, toolsKey, req.ToolsJSON, appendSampling(b[len(b):], req.Sampling)}
	}
	head := make([]byte, 0, len(model)+32)
	head = append(head, `{"model":`...)
	head = jsonstr.Append(head, model)
	head = append(head, `,"messages":[`...)
	b := make([]byte, 0, toolsSize(req.Tools)+256)
	b = append(b, streamOptions...)
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":`...)
		b = appendTools(b, req.Tools)
	}
	return [][]byte{head, req.Messages.encoded, appendSampling(b, req.Sampling)}
}

const streamOptions = `],"stream":true,"stream_options":{"include_usage":true}`

// toolsKey is the body between the messages and a shared ToolsJSON.
// Shared by every body, it is never written to: sentOnce only reslices
// its pieces.
var toolsKey = []byte(streamOptions + `,"tools":`)

// EncodeTools returns tools as the JSON array a round's body sends, for
// Request.ToolsJSON.
func EncodeTools(tools []ToolDefinition) []byte {
	return appendTools(make([]byte, 0, toolsSize(tools)), tools)
}

func appendTools(b []byte, tools []ToolDefinition) []byte {
	b = append(b, '[')
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = jsonstr.Append(b, t.Type)
		b = append(b, `,"function":{"name":`...)
		b = jsonstr.Append(b, t.Function.Name)
		if t.Function.Description != "" {
			b = append(b, `,"description":`...)
			b = jsonstr.Append(b, t.Function.Description)
		}
		b = append(b, `,"parameters":`...)
		if len(t.Function.Parameters) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, t.Function.Parameters...)
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendSampling appends the client's sampling parameters and the
// body's closing brace.
func appendSampling(b []byte, sampling map[string]json.RawMessage) []byte {
	if len(sampling) == 0 {
		return append(b, '}') // and no sorted keys to make
	}
	for _, k := range slices.Sorted(maps.Keys(sampling)) {
		switch k {
		case "model", "messages", "stream", "stream_options", "tools":
			continue // the gateway's own
		}
		b = append(b, ',')
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		if v := sampling[k]; len(v) == 0 {
			b = append(b, "null"...)
		} else {
			b = append(b, v...)
		}
	}
	return append(b, '}')
}

// samplingSize is the room appendSampling takes for sampling, its
// closing brace included.
func samplingSize(sampling map[string]json.RawMessage) int {
	n := 1
	for k, v := range sampling {
		n += len(k) + len(v) + 8 // a comma, the key's quotes and escapes, a colon, null
	}
	return n
}

func toolsSize(tools []ToolDefinition) int {
	n := 0
	for _, t := range tools {
		n += len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters) + 64
	}
	return n
}

// statusError reads the backend's error answer into an *Error.
func statusError(resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(b))
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(b, &env) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(env.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(env.Error, &flat) == nil && flat != "":
			msg = flat // Ollama: {"error":"..."}
		case env.Message != "":
			msg = env.Message
		case env.Detail != "":
			msg = env.Detail
		}
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &Error{Status: resp.StatusCode, Message: clip.Ellipsis(msg, 500)}
}
