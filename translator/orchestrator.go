package translator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/switchyardhq/switchyard/internal/guard"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/tools/artifacts"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/tools"
)

// Defaults of Config.
const (
	DefaultMaxRounds          = 8
	DefaultHeartbeat          = 10 * time.Second
	DefaultToolTimeout        = 2 * time.Minute
	DefaultMaxAttachmentChars = 100_000
	// DefaultMaxToolCallsPerRound is as many calls as a model asking
	// for several charts and a document around them needs.
	DefaultMaxToolCallsPerRound = 8
	// DefaultRenderConcurrency lets an account render two deliverables
	// at once, and no more: the renderers are CPU bound, and diagrams
	// share one layout engine per process, so an account's further
	// renders wait behind its own rather than crowd out other accounts.
	DefaultRenderConcurrency = 2
	// reasoningEvery spaces reasoning_chars events (Revision B), which
	// would otherwise follow every reasoning token.
	reasoningEvery = 250 * time.Millisecond
)

// Outcomes of a tool call, as reported to Config.ToolObserver.
const (
	ToolOutcomeDone    = "done"    // the tool returned a result
	ToolOutcomeFailed  = "failed"  // the tool returned an error, or the call was malformed
	ToolOutcomeTimeout = "timeout" // the call ran past Config.ToolTimeout
	ToolOutcomeRefused = "refused" // the call was past Config.MaxToolCallsPerRound and did not run
)

// ToolUnknown is the tool name reported to Config.ToolObserver for a
// call to a tool the request was not offered; the name the backend
// wrote is the backend's to choose and could be anything.
const ToolUnknown = "unknown"

// Config configures an Orchestrator.
type Config struct {
	// Upstream is the backend. Required.
	Upstream *upstream.Client
	// Profile is the active spec revision's profile. Required: the zero
	// Profile is no revision.
	Profile policy.Profile
	// Tools are the tools the backend may be offered, by mode.
	// Default: nil, no tools.
	Tools *tools.Registry
	// Memory supplies the end user's remembered facts to the system
	// prompt. Default: nil, no memory.
	Memory storage.Memory
	// Files opens uploaded files referenced by input_file parts.
	// Default: nil, which refuses such parts with file_not_found.
	Files FileOpener
	// IDs hands out obj<N>/el<N> ids; tools receive it as Env.IDs.
	// Default: nil, which leaves tools that create objects unable to.
	IDs storage.ObjectIDs
	// Outputs stores the caller's images echoed in a non-streaming
	// answer, so that they carry a file_id instead of base64 (spec 2.2).
	// Default: nil, which echoes them inline.
	Outputs artifacts.FileStore
	// Usage records and settles each completion. Default: nil, which
	// records nothing and prices cost_cents from Profile's prices.
	Usage UsageRecorder
	// Admit, when set, is called before the first backend call of every
	// request and returns once the request may go to the backend, with a
	// function that gives its place back. While a request waits, Admit
	// calls onPosition with its place in line (1 is next) from the
	// caller's goroutine; a streaming request relays it as queue_position
	// chunks. An error (an *apierror.Error, such as 503 when the line is
	// too long) is answered as it is. Default: nil, no admission control.
	Admit func(ctx context.Context, onPosition func(position int)) (release func(), err error)
	// Instructions is operator text added to the service system prompt.
	// Default: empty.
	Instructions string
	// MaxRounds bounds the backend calls of one request. The last round
	// is offered no tools, so it must answer. Default: DefaultMaxRounds.
	MaxRounds int
	// Heartbeat is how long a stream may stay silent before an act tick
	// (or, with progress off, an SSE comment) is sent.
	// Default: DefaultHeartbeat.
	Heartbeat time.Duration
	// ToolTimeout bounds one tool call. Default: DefaultToolTimeout.
	ToolTimeout time.Duration
	// MaxToolCallsPerRound bounds the tool calls run from one backend
	// answer. Calls past it are not run: each is answered to the model
	// with an error saying so (every call needs an answer for the next
	// round to be valid), and reported to ToolObserver as
	// ToolOutcomeRefused. Default: DefaultMaxToolCallsPerRound.
	MaxToolCallsPerRound int
	// RenderConcurrency bounds the calls of file-output tools (the
	// create_* tools, update_object, delete_object: tools registered
	// with tools.FileOutput) one account runs at once, counted across
	// the account's concurrent requests served by this Orchestrator. A
	// call past it waits for a turn within its ToolTimeout and fails
	// when none comes. Default: DefaultRenderConcurrency.
	RenderConcurrency int
	// MaxAttachmentChars bounds the extracted text of one attached file
	// given to the model. Default: DefaultMaxAttachmentChars.
	MaxAttachmentChars int
	// Logger receives operational logs. Default: nil, no logs.
	Logger *slog.Logger
	// ToolObserver, when set, is told of every tool call the backend
	// makes once it has run or failed: the tool's name, one of the
	// ToolOutcome values and how long the call took. A call to a tool
	// the request was not offered reports the name ToolUnknown, so that
	// only registered names reach it. A call cut short because the
	// request itself ended is not reported: its outcome says nothing of
	// the tool. It is called from the request's goroutine and must not
	// block. Default: nil, nothing is reported.
	ToolObserver func(tool, outcome string, d time.Duration)

	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// NewTicker makes the heartbeat's ticker: a channel and its stop
	// function. Default: time.NewTicker.
	NewTicker func(d time.Duration) (<-chan time.Time, func())
	// NewID returns completion ids. Default: "chatcmpl-" and 24 random
	// hex digits.
	NewID func() string
}

// Orchestrator serves /v3 chat completions. It is safe for concurrent
// use; each request gets its own turn state.
type Orchestrator struct {
	cfg      Config
	log      *slog.Logger
	renders  *accountSlots // RenderConcurrency per account
	toolSets toolSets
}

// New checks cfg and returns an Orchestrator.
func New(cfg Config) (*Orchestrator, error) {
	if cfg.Upstream == nil {
		return nil, errors.New("translator: Config.Upstream is required")
	}
	if cfg.Profile.Revision == "" {
		return nil, errors.New("translator: Config.Profile is required")
	}
	if cfg.MaxRounds <= 0 {
		cfg.MaxRounds = DefaultMaxRounds
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = DefaultToolTimeout
	}
	if cfg.MaxAttachmentChars <= 0 {
		cfg.MaxAttachmentChars = DefaultMaxAttachmentChars
	}
	if cfg.MaxToolCallsPerRound <= 0 {
		cfg.MaxToolCallsPerRound = DefaultMaxToolCallsPerRound
	}
	if cfg.RenderConcurrency <= 0 {
		cfg.RenderConcurrency = DefaultRenderConcurrency
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewTicker == nil {
		cfg.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Orchestrator{cfg: cfg, log: log, renders: newAccountSlots(cfg.RenderConcurrency)}, nil
}

func (o *Orchestrator) maxAttachmentChars() int { return o.cfg.MaxAttachmentChars }

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// Serve answers a validated request (see ReadRequest) as a stream or as
// one JSON object, and writes every error itself. It returns when the
// answer is written, the client left, or the request failed; usage is
// recorded before it returns.
func (o *Orchestrator) Serve(w http.ResponseWriter, r *http.Request, req *request.Request, caller Caller) {
	ctx := r.Context()
	t := o.newTurn(req, caller)
	if t.req.Responses {
		t.id = responseID(t.id)
	}
	if err := t.prepareOffStack(ctx); err != nil {
		if ctx.Err() == nil {
			o.logFailure(t, "preparing the conversation", err)
			apierror.Write(w, err)
		}
		return
	}
	// The client's messages are in the conversation now, encoded as the
	// backend reads them; their parse is not needed while the answer
	// streams, which may be long.
	t.req.Messages = nil
	// A panic on the request's goroutine still charges the rounds that
	// ran; the connection then ends as a broken one does.
	defer func() {
		if v := recover(); v != nil {
			p := guard.Recovered(requestGoroutine, v)
			if !t.recorded {
				t.record(ctx, p)
			}
			panic(http.ErrAbortHandler)
		}
	}()
	if t.req.Stream {
		t.serveStream(ctx, w)
		return
	}
	release, err := t.admit(ctx, nil)
	if err != nil {
		if ctx.Err() == nil {
			apierror.Write(w, err)
		}
		return
	}
	defer release()
	t.serveJSON(ctx, w)
}

// requestGoroutine names the panics of a request's own goroutine in
// switchyard_panics_recovered_total.
var requestGoroutine = guard.Name("v3_request")

// prepareGoroutine names the goroutine a request is prepared on.
var prepareGoroutine = guard.Name("v3_prepare")

// prepareOffStack runs prepare on a goroutine of its own and waits for
// it. Preparing reads the store (an end user's memory, the objects,
// the attachments) through SQLite compiled to Go, whose calls run deep:
// on the request's goroutine they grew its stack to 32 KiB, which it
// kept for as long as the answer streamed, since the collector halves a
// stack only while less than a quarter of it is in use and the wait
// under Caddy's chain is about 13.5 KB deep. The preparing goroutine's
// stack is gone when it ends. A panic there is recovered, logged and
// counted, and fails the request with an internal error.
func (t *turn) prepareOffStack(ctx context.Context) error {
	p := &offStack{t: t, ctx: ctx}
	p.done.Add(1)
	go p.run()
	p.done.Wait()
	return p.err
}

// offStack is a turn's preparation on a goroutine of its own, in one
// object: a channel, the error and the closures over them took three.
type offStack struct {
	t    *turn
	ctx  context.Context
	err  error
	done sync.WaitGroup
}

func (p *offStack) run() {
	defer p.done.Done()
	if err := guard.Run(prepareGoroutine, p.prepare); err != nil {
		p.err = err
	}
}

func (p *offStack) prepare() { p.err = p.t.prepare(p.ctx) }

// queuePositionEvery is how often a waiting stream is told its place in
// line at most.
const queuePositionEvery = time.Second

// admit waits for the admission queue, when there is one. A waiting stream
// (out not nil) is told its place in line, at most once a second, before
// anything else; the first report starts the stream.
func (t *turn) admit(ctx context.Context, out *streamOutput) (release func(), err error) {
	if t.o.cfg.Admit == nil {
		return func() {}, nil
	}
	var onPosition func(int)
	if out != nil {
		var last time.Time
		lastPos := 0
		onPosition = func(pos int) {
			now := t.o.cfg.Now()
			if pos == lastPos || (lastPos != 0 && now.Sub(last) < queuePositionEvery) {
				return
			}
			last, lastPos = now, pos
			if out.commit() == nil {
				_ = out.send(wire.Delta{QueuePosition: &pos})
			}
		}
	}
	return t.o.cfg.Admit(ctx, onPosition)
}

func (o *Orchestrator) logFailure(t *turn, what string, err error) {
	var ae *apierror.Error
	if errors.As(err, &ae) && ae.Status < 500 {
		return // the client's mistake, already told to the client
	}
	o.log.LogAttrs(context.Background(), slog.LevelError, what,
		slog.String("request_id", t.caller.RequestID),
		slog.String("account_id", t.caller.AccountID),
		slog.Any("error", err))
}
