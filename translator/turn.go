package translator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchyardhq/switchyard/internal/guard"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/translator/request"
	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/artifacts"
)

const modelLabel = "Generating a response"

// turn is the state of one request. It is created per request and used
// by one goroutine, except for activities, which the heartbeat reads.
type turn struct {
	recorded bool // the usage went to the UsageRecorder (record)
	o        *Orchestrator
	req      *request.Request
	caller   Caller
	id       string
	created  int64
	started  time.Time

	env   *tools.Env
	tools *offeredTools         // shared with every turn offered the same tools
	conv  upstream.Conversation // what the backend is sent, encoded as it grows
	acts  activities            // the heartbeat's goroutine reads it too

	answer     strings.Builder
	sepPending bool // the next answer text follows a tool round's text
	artifacts  []wire.Artifact
	renames    []wire.ArtifactRename // for a JSON answer's artifact_renames
	removals   []wire.ArtifactRemove // for a JSON answer's artifact_removals
	sources    []wire.Source         // web pages read, for a JSON answer's search_sources
	echoed     []wire.Artifact       // the caller's images, sent before the answer
	finish     string

	rounds    int // backend calls that answered
	toolCalls int
	usage     usageTotals
	served    upstream.Served // what answered the last round; zero without a Router
}

// newTurn starts the turn of req. The turn works on a copy of req, from
// which it drops what it no longer needs (Serve), leaving the caller's
// as it was.
func (o *Orchestrator) newTurn(req *request.Request, caller Caller) *turn {
	now := o.cfg.Now()
	own := *req
	return &turn{
		o: o, req: &own, caller: caller,
		id: o.cfg.NewID(), created: now.Unix(), started: now,
		acts:   activities{now: o.cfg.Now, chars: o.revisionB()},
		finish: "stop",
	}
}

func (o *Orchestrator) revisionB() bool { return o.cfg.Profile.Revision == policy.RevisionB }

// prepare builds the upstream conversation. Errors are for the client.
func (t *turn) prepare(ctx context.Context) error {
	files, err := t.openFiles(ctx)
	if err != nil {
		return err
	}
	var facts []string
	if t.o.cfg.Memory != nil && t.req.EndUser != "" {
		facts, err = t.o.cfg.Memory.Facts(ctx, t.caller.AccountID, t.req.EndUser)
		if err != nil {
			// Answering without memory beats not answering.
			t.o.log.LogAttrs(ctx, slog.LevelWarn, "reading end-user memory",
				slog.String("request_id", t.caller.RequestID), slog.Any("error", err))
			facts = nil
		}
	}
	loc := t.req.Location
	if loc == nil {
		loc = time.UTC
	}
	links := userLinks(t.req.Messages)
	t.env = &tools.Env{
		AccountID: t.caller.AccountID,
		EndUserID: t.req.EndUser,
		Objects:   t.req.Objects,
		SearchOff: t.req.SkipSearch,
		Links:     links,
		Location:  loc,
		IDs:       t.o.cfg.IDs,
	}
	if err := artifacts.Reconcile(ctx, t.env); err != nil {
		var unknown *artifacts.UnknownObjectsError
		if errors.As(err, &unknown) {
			return apierror.InvalidRequest(request.CodeInvalidObjects, "objects: "+unknown.Error()+
				"; send only the ids of this account's artifact events.")
		}
		return err
	}
	// The set kept with the tools' encoding is the request's offered
	// tools: a turn keeps no Set of its own, which took its state from
	// 664 bytes to a size class of 704 instead of 640.
	t.tools = t.o.toolSets.forSet(t.o.cfg.Tools.Offer(tools.Mode{
		Files:     t.req.Files,
		Search:    !t.req.SkipSearch,
		UserLinks: len(links) > 0,
		EndUser:   t.req.EndUser != "",
	}))
	system := promptBuffers.Get().(*bytes.Buffer)
	defer putPromptBuffer(system)
	writeSystemPrompt(system, promptInputs{
		instructions: t.o.cfg.Instructions,
		now:          t.started,
		location:     t.req.Location,
		userName:     t.req.UserName,
		offered:      t.tools.set,
		files:        t.req.Files,
		searchOff:    t.req.SkipSearch,
		facts:        facts,
		objects:      t.req.Objects,
		client:       clientInstructions(t.req.Messages),
	})
	images := fileImages(files)
	if t.echoed, err = t.echoImages(ctx, files, images); err != nil {
		return err
	}
	system.WriteString(echoNote(t.echoed))
	var msgs []upstream.Message
	msgs, t.env.Images = t.upstreamMessages(files, images)
	t.conv = upstream.NewConversationText(system.Bytes(), msgs...)
	return nil
}

// output is where a turn's deltas go: the event stream, or the collector
// of a JSON answer.
type output interface {
	// commit is called once the backend has produced its first event;
	// before that, nothing has reached the client and a failure can
	// still be an ordinary HTTP error.
	commit() error
	send(d wire.Delta) error
	// relay is send for answer text while more of the backend's events
	// are already in hand: it may wait for flush.
	relay(d wire.Delta) error
	// flush sends what relay held back.
	flush() error
}

// errClientGone is returned when writing to the client failed.
var errClientGone = errors.New("client connection lost")

// loop runs model rounds and tool calls until the model answers.
//
// loop, modelRound and openRound stay on the stack for as long as the
// backend has not answered, under Caddy's chain and the handlers in
// front: all of it about 13.5 KB, 1.5 KB short of where the goroutine's
// stack doubles from 16 to 32 KiB (docs/performance.md, "Memory of an
// idle stream"). So they keep their frames small, and what is done
// before or after the wait (the echoed images, the tools, the reading
// of the answer) is in functions of its own, whose frames are not there
// while it waits.
func (t *turn) loop(ctx context.Context, out output) error {
	if err := t.sendEchoed(out); err != nil {
		return err
	}
	for round := 1; round <= t.o.cfg.MaxRounds; round++ {
		if round > 1 && t.capReached() {
			// Another round could only be charged nothing more, so the
			// backend's work would be given away: the answer ends with
			// what the rounds so far produced, cut short like an answer
			// that ran out of tokens.
			t.finish = "length"
			return nil
		}
		content, calls, err := t.modelRound(ctx, out, round)
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			return nil
		}
		if err := t.runTools(ctx, out, content, calls); err != nil {
			return err
		}
	}
	return nil // not reached: the last round is offered no tools
}

// sendEchoed sends the caller's images, echoed as artifacts, before the
// answer.
//
//go:noinline
func (t *turn) sendEchoed(out output) error {
	for i := range t.echoed {
		t.artifacts = append(t.artifacts, t.echoed[i].WithoutInline())
		if err := out.send(wire.Delta{Artifact: &t.echoed[i]}); err != nil {
			return err
		}
	}
	return nil
}

// runTools adds the model's tool calls to the conversation, runs them
// (at most MaxToolCallsPerRound; the rest are refused) and adds their
// results.
//
//go:noinline
func (t *turn) runTools(ctx context.Context, out output, content string, calls []upstream.ToolCall) error {
	t.conv.Append(upstream.Message{Role: "assistant", Content: content, ToolCalls: calls})
	for i, c := range calls {
		var result string
		var err error
		if i < t.o.cfg.MaxToolCallsPerRound {
			result, err = t.runTool(ctx, out, c)
		} else {
			result = t.refuseTool(c)
		}
		if err != nil {
			return err
		}
		t.conv.Append(upstream.Message{Role: "tool", ToolCallID: c.ID, Name: c.Function.Name, Content: result})
	}
	return nil
}

// capReached reports whether the rounds so far already cost the
// per-request cap (Profile.MaxChargeCents; revision B). Without a cap it
// is always false.
func (t *turn) capReached() bool {
	p := t.o.cfg.Profile
	return p.MaxChargeCents > 0 && t.cost() >= p.MaxChargeCents
}

// cost is the price of the usage of the rounds so far, at the prices
// of the model that answered (the request's, or its fallback).
func (t *turn) cost() int64 {
	return t.o.cfg.Profile.ForModel(t.model()).Price(t.usage.prompt, t.usage.completion)
}

// model is the model that answered the last round: the request's, or the
// fallback a pool of backends moved on to.
func (t *turn) model() string {
	if t.served.Model != "" {
		return t.served.Model
	}
	return t.req.Model
}

// modelRound streams one backend call, relaying answer text at once, and
// returns the round's text and tool calls.
func (t *turn) modelRound(ctx context.Context, out output, round int) (string, []upstream.ToolCall, error) {
	st, err := t.openRound(ctx, out, round)
	if err != nil {
		return "", nil, err
	}
	return t.readRound(ctx, out, st, round)
}

// openRound starts the round's activity and sends the round upstream;
// it returns when the backend's answer has begun.
//
//go:noinline
func (t *turn) openRound(ctx context.Context, out output, round int) (*upstream.Stream, error) {
	if err := sendAct(out, t.acts.start(wire.ActModel, modelLabel)); err != nil {
		return nil, err
	}
	req := upstream.Request{Model: t.req.Model, Messages: t.conv, Sampling: t.req.Sampling}
	if round != t.o.cfg.MaxRounds {
		req.Tools, req.ToolsJSON = t.tools.defs, t.tools.json
	}
	live := ctx.Err() == nil
	st, err := t.o.cfg.Upstream.Stream(ctx, req)
	if err != nil {
		if live && ctx.Err() != nil {
			// The round went out and the client left before its answer
			// began: owed like a /v1 request the client left.
			t.rounds++
			t.usage.addUnanswered(req)
		}
		_ = sendAct(out, t.acts.end(wire.ActFail, ""))
		return nil, err
	}
	return st, nil
}

// sendAct sends an activity event. A function of its own, so that the
// delta it builds takes no room in openRound's frame.
//
//go:noinline
func sendAct(out output, act *wire.Act) error { return out.send(wire.Delta{Act: act}) }

// readRound reads the answer of a round that openRound began.
//
//go:noinline
func (t *turn) readRound(ctx context.Context, out output, st *upstream.Stream, round int) (string, []upstream.ToolCall, error) {
	last := round == t.o.cfg.MaxRounds
	defer st.Close()
	// Text is relayed as the backend sent it: what arrived together is
	// flushed together, when the stream is about to wait for more.
	st.BeforeWait(func() { _ = out.flush() })
	defer func() { _ = out.flush() }()
	t.rounds++
	t.served = st.Served()
	// Whatever ends the round, also a client that is gone, its usage
	// counts: the backend did the work.
	defer t.usage.add(st)

	rc := reasoningCounter{t: t, out: out}
	var content strings.Builder
	for {
		ev, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = out.send(wire.Delta{Act: t.acts.end(wire.ActFail, "")})
			return "", nil, err
		}
		if err := out.commit(); err != nil {
			return "", nil, err
		}
		t.acts.setChars(st.Chars())
		switch ev.Kind {
		case upstream.EventReasoning:
			err = rc.observe(st.Chars().Think, false)
		case upstream.EventContent:
			if err = rc.observe(st.Chars().Think, true); err != nil {
				break
			}
			content.WriteString(ev.Text)
			text := ev.Text
			if t.sepPending {
				text = "\n\n" + text
				t.sepPending = false
			}
			t.answer.WriteString(text)
			err = out.relay(wire.Delta{Content: &text})
		case upstream.EventToolCall:
			err = rc.observe(st.Chars().Think, true)
		}
		if err != nil {
			return "", nil, err
		}
	}
	if err := out.commit(); err != nil { // a round that produced nothing at all
		return "", nil, err
	}
	if err := rc.observe(st.Chars().Think, true); err != nil {
		return "", nil, err
	}
	t.acts.setChars(st.Chars())

	calls := st.ToolCalls()
	if last {
		calls = nil // offered no tools: whatever it wrote, this is the answer
	}
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = upstream.DefaultCallID(round, i)
		}
	}
	if len(calls) == 0 {
		t.finish = st.FinishReason()
		if t.finish == "tool_calls" {
			t.finish = "stop"
		}
	} else if content.Len() > 0 {
		t.sepPending = true
	}
	if err := out.send(wire.Delta{Act: t.acts.end(wire.ActDone, "")}); err != nil {
		return "", nil, err
	}
	return content.String(), calls, nil
}

// reasoningCounter sends reasoning_chars (Revision B): the running count
// of the round's reasoning, at most every reasoningEvery, and once more
// when reasoning gives way to text or tool calls so the last count is
// exact.
type reasoningCounter struct {
	t        *turn
	out      output
	sent     int
	lastSent time.Time
}

func (r *reasoningCounter) observe(think int, final bool) error {
	if !r.t.o.revisionB() || !r.t.req.Progress || think == r.sent {
		return nil
	}
	now := r.t.o.cfg.Now()
	if !final && r.sent > 0 && now.Sub(r.lastSent) < reasoningEvery {
		return nil
	}
	r.sent, r.lastSent = think, now
	n := think
	return r.out.send(wire.Delta{ReasoningChars: &n})
}

// runTool runs one tool call and returns what the model reads. Only a
// lost client is an error; a failing tool is the model's to handle.
func (t *turn) runTool(ctx context.Context, out output, c upstream.ToolCall) (string, error) {
	name := c.Function.Name
	args := json.RawMessage(strings.TrimSpace(c.Function.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}") // some backends send nothing for a call without arguments
	}
	tool, offered := t.tools.set.Lookup(name)
	label := "Running " + strings.ReplaceAll(name, "_", " ")
	if offered {
		label = tools.LabelFor(tool, name, args)
	}
	start := t.acts.start(wire.ActTool, label)
	if err := out.send(wire.Delta{Act: start}); err != nil {
		return "", err
	}
	t.toolCalls++
	began := t.o.cfg.Now()
	fail := func(msg string) (string, error) {
		if err := out.send(wire.Delta{Act: t.acts.end(wire.ActFail, "")}); err != nil {
			return "", err
		}
		return msg, nil
	}
	if !offered {
		t.observeTool(ToolUnknown, ToolOutcomeFailed, began)
		return fail(fmt.Sprintf("error: no tool named %q is available in this conversation", clip.Ellipsis(name, 64)))
	}
	if !json.Valid(args) {
		t.observeTool(tool.Name(), ToolOutcomeFailed, began)
		return fail("error: the arguments are not valid JSON")
	}

	call := tools.Call{ID: c.ID, Name: name, Arguments: args, Env: t.env}
	if t.o.revisionB() && t.req.Progress {
		call.Progress = &stepSink{out: out, act: start.ID}
	}
	tctx, cancel := context.WithTimeout(ctx, t.o.cfg.ToolTimeout)
	res, err := t.execute(tctx, tool, call)
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded)
	cancel()
	if ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	switch {
	case err == nil:
		t.observeTool(tool.Name(), ToolOutcomeDone, began)
	case timedOut:
		t.observeTool(tool.Name(), ToolOutcomeTimeout, began)
	default:
		t.observeTool(tool.Name(), ToolOutcomeFailed, began)
	}
	if err != nil {
		t.o.log.LogAttrs(ctx, slog.LevelWarn, "tool call failed",
			slog.String("request_id", t.caller.RequestID), slog.String("tool", name), slog.Any("error", err))
		return fail(tools.ModelMessage(err))
	}
	if err := t.emitResult(out, res); err != nil {
		return "", err
	}
	if err := out.send(wire.Delta{Act: t.acts.end(wire.ActDone, res.Object)}); err != nil {
		return "", err
	}
	if strings.TrimSpace(res.Content) == "" {
		return "done", nil // some backends refuse an empty tool message
	}
	return res.Content, nil
}

// execute runs an offered tool. A file-output tool first waits for one
// of the account's render places (Config.RenderConcurrency), within the
// call's time.
func (t *turn) execute(ctx context.Context, tool tools.Tool, call tools.Call) (tools.Result, error) {
	if c, _ := t.tools.set.Capability(tool.Name()); c != tools.FileOutput {
		return runGuarded(ctx, tool, call)
	}
	release, err := t.o.renders.acquire(ctx, t.caller.AccountID)
	if err != nil {
		return tools.Result{}, &tools.CallError{
			Message: fmt.Sprintf("this account already has %d renders running and none finished in time; try again later", t.o.cfg.RenderConcurrency),
			Err:     err,
		}
	}
	defer release()
	return runGuarded(ctx, tool, call)
}

// toolGoroutine names the tool calls' panics in
// switchyard_panics_recovered_total.
var toolGoroutine = guard.Name("tool_call")

// runGuarded runs a tool call. A tool that panics fails like one that
// returned an error: the model is told, the answer goes on, and the
// rounds so far are charged as for any other ending.
func runGuarded(ctx context.Context, tool tools.Tool, call tools.Call) (res tools.Result, err error) {
	if p := guard.Run(toolGoroutine, func() { res, err = tool.Execute(ctx, call) }); p != nil {
		return tools.Result{}, &tools.CallError{Message: "the tool failed unexpectedly", Err: p}
	}
	return res, err
}

// refuseTool answers a call past Config.MaxToolCallsPerRound without
// running it. The model still needs an answer to every call it made;
// the client sees no activity, since nothing ran.
func (t *turn) refuseTool(c upstream.ToolCall) string {
	name := ToolUnknown
	if tool, ok := t.tools.set.Lookup(c.Function.Name); ok {
		name = tool.Name()
	}
	t.observeTool(name, ToolOutcomeRefused, t.o.cfg.Now())
	return fmt.Sprintf("error: not run: only the first %d tool calls of one answer are run; make this call again after reading their results if it is still needed",
		t.o.cfg.MaxToolCallsPerRound)
}

// observeTool reports a finished tool call to Config.ToolObserver.
func (t *turn) observeTool(tool, outcome string, began time.Time) {
	if obs := t.o.cfg.ToolObserver; obs != nil {
		obs(tool, outcome, t.o.cfg.Now().Sub(began))
	}
}

// emitResult sends the events of a tool result. Artifact events are
// dropped when file output is off: the spec promises that such a request
// never sees one, whatever a tool returns.
func (t *turn) emitResult(out output, res tools.Result) error {
	if t.req.Files {
		for i := range res.Artifacts {
			a := res.Artifacts[i]
			t.artifacts = append(t.artifacts, a.WithoutInline())
			if err := out.send(wire.Delta{Artifact: &a}); err != nil {
				return err
			}
		}
		for _, id := range res.Removed {
			t.removals = append(t.removals, wire.ArtifactRemove{ObjectID: id})
			if err := out.send(wire.Delta{ArtifactRemove: &wire.ArtifactRemove{ObjectID: id}}); err != nil {
				return err
			}
		}
		for i := range res.Renamed {
			t.renames = append(t.renames, res.Renamed[i])
			if err := out.send(wire.Delta{ArtifactRename: &res.Renamed[i]}); err != nil {
				return err
			}
		}
	}
	if len(res.Sources) > 0 {
		t.sources = appendSources(t.sources, res.Sources)
		return out.send(wire.Delta{SearchSources: res.Sources})
	}
	return nil
}

// appendSources adds the sources not yet listed, by URL.
func appendSources(list, more []wire.Source) []wire.Source {
	for _, s := range more {
		if !slices.ContainsFunc(list, func(o wire.Source) bool { return o.URL == s.URL }) {
			list = append(list, s)
		}
	}
	return list
}

// stepSink turns a tool's progress into step events, with step ids made
// unique within the response by the activity id.
type stepSink struct {
	out output
	act int64
}

func (s *stepSink) sid(id string) string { return fmt.Sprintf("%d.%s", s.act, id) }

func (s *stepSink) Step(st wire.Step) {
	st.SID = s.sid(st.SID)
	_ = s.out.send(wire.Delta{Step: &st})
}

func (s *stepSink) StepData(d wire.StepData) {
	d.SID = s.sid(d.SID)
	d.Content = clipStepData(d.Content)
	if d.Images == nil {
		d.Images = []string{}
	}
	_ = s.out.send(wire.Delta{StepData: &d})
}

// clientError is the envelope for a failure before anything was sent.
func clientError(err error) *apierror.Error {
	var ue *upstream.Error
	if errors.As(err, &ue) {
		if ue.Timeout {
			return apierror.New(504, apierror.TypeServer, CodeUpstreamTimeout,
				"The model backend did not answer in time. Retry the request.")
		}
		msg := "The model backend failed. Retry the request."
		switch ue.Status {
		case 400, 413, 422:
			// Usually about the request itself (context too long), so
			// the backend's words help the caller.
			msg = "The model backend refused the request: " + ue.Message
		}
		return apierror.New(502, apierror.TypeServer, CodeUpstreamError, msg)
	}
	return apierror.From(err)
}

// streamError is the in-stream error frame for a failure after the
// stream started.
func streamError(err error) *apierror.Error {
	var ae *apierror.Error
	if errors.As(err, &ae) {
		return ae
	}
	var ue *upstream.Error
	if errors.As(err, &ue) {
		return apierror.New(502, apierror.TypeServer, CodeStreamInterrupted,
			"The answer broke off midway. Retry the request.")
	}
	return apierror.Internal()
}
