package translator

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// serveStream answers with an event stream. Headers are held back until
// the backend produced its first event, so that a backend that fails
// right away gets the client a plain HTTP error instead of a stream that
// holds nothing but an error.
func (t *turn) serveStream(ctx context.Context, w http.ResponseWriter) {
	opts := StreamOptions{ID: t.id, Created: t.created, Model: t.req.Model, Progress: t.req.Progress, Now: t.o.cfg.Now}
	var sw eventStream
	if t.req.Responses {
		sw = NewResponsesWriter(w, opts)
	} else {
		sw = NewStreamWriter(w, opts)
	}
	out := &streamOutput{w: sw, t: t, ctx: ctx}
	release, err := t.admit(ctx, out)
	if err != nil {
		out.stopHeartbeat()
		switch {
		case t.clientGone(ctx, err):
		case !out.committed:
			apierror.Write(w, err)
		default:
			_ = sw.Fail(err)
		}
		return
	}
	defer release()
	err = t.loop(ctx, out)
	out.stopHeartbeat()
	if err == nil && sw.Err() != nil {
		err = errClientGone
	}
	cost := t.record(ctx, err)
	switch {
	case err == nil:
		usage := t.usageObject(cost)
		switch {
		case t.req.IncludeUsage:
			_ = sw.Finish(t.finish, usage, true)
		case t.o.cfg.Profile.UsageAlways:
			_ = sw.Finish(t.finish, usage, false)
		default:
			_ = sw.Finish(t.finish, nil, false)
		}
	case t.clientGone(ctx, err):
		// Nobody is listening.
	case !out.committed:
		t.o.logFailure(t, "chat completion failed", err)
		apierror.Write(w, clientError(err))
	default:
		t.o.logFailure(t, "chat completion stream failed", err)
		_ = sw.Fail(streamError(err))
	}
}

// eventStream is the writer of a streamed answer: StreamWriter for a chat
// completion, ResponsesWriter for a /v3/responses answer.
type eventStream interface {
	Start() error
	Send(d wire.Delta) error
	SendBuffered(d wire.Delta) error
	Flush() error
	Finish(reason string, usage *wire.Usage, separate bool) error
	Fail(err error) error
	Comment(text string) error
	IdleSince() time.Time
	Err() error
}

// serveJSON answers with one chat.completion object, or for a
// /v3/responses request one response object (responseJSON).
func (t *turn) serveJSON(ctx context.Context, w http.ResponseWriter) {
	out := &jsonOutput{}
	err := t.loop(ctx, out)
	cost := t.record(ctx, err)
	if err != nil {
		if !t.clientGone(ctx, err) {
			t.o.logFailure(t, "chat completion failed", err)
			apierror.Write(w, clientError(err))
		}
		return
	}
	artifacts := t.artifacts
	if artifacts == nil {
		artifacts = []wire.Artifact{}
	}
	var body []byte
	if t.req.Responses {
		body, err = json.Marshal(t.responseJSON(artifacts, cost))
	} else {
		body, err = json.Marshal(wire.Completion{
			ID: t.id, Object: "chat.completion", Created: t.created, Model: t.req.Model,
			Choices: []wire.CompletionChoice{{
				Message:      wire.CompletionMessage{Role: "assistant", Content: t.answer.String()},
				FinishReason: t.finish,
			}},
			Artifacts:        artifacts,
			ArtifactRenames:  t.renames,
			ArtifactRemovals: t.removals,
			SearchSources:    t.sources,
			Usage:            *t.usageObject(cost),
		})
	}
	if err != nil {
		apierror.Write(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// responseJSON is the non-streaming /v3/responses answer: the message
// item and, beside it, the chat completion's /v3 members.
func (t *turn) responseJSON(artifacts []wire.Artifact, cost int64) wire.Response {
	status, incomplete := wire.ResponseCompleted, (*wire.IncompleteDetails)(nil)
	if t.finish == "length" {
		status, incomplete = wire.ResponseIncomplete, &wire.IncompleteDetails{Reason: "max_output_tokens"}
	}
	return wire.Response{
		ID: t.id, Object: "response", CreatedAt: t.created, Status: status, IncompleteDetails: incomplete,
		Model: t.req.Model,
		Output: []wire.OutputMessage{{
			ID: messageItemID(t.id), Type: "message", Status: status, Role: "assistant",
			Content: []wire.OutputText{wire.NewOutputText(t.answer.String())},
		}},
		ToolChoice: "auto", Tools: []struct{}{},
		Usage:     wire.ResponseUsageOf(*t.usageObject(cost)),
		Artifacts: artifacts, ArtifactRenames: t.renames, ArtifactRemovals: t.removals, SearchSources: t.sources,
	}
}

func (t *turn) clientGone(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, errClientGone)
}

// usageObject is the usage shown to the client (spec 2.5).
func (t *turn) usageObject(cost int64) *wire.Usage {
	u := &wire.Usage{
		PromptTokens:     t.usage.prompt,
		CompletionTokens: t.usage.completion,
		TotalTokens:      t.usage.prompt + t.usage.completion,
	}
	if t.o.cfg.Profile.Revision == policy.RevisionA {
		a := t.usage.answer
		u.AnswerTokens = &a
	}
	if t.req.IncludeCost {
		u.CostCents = &cost
	}
	return u
}

// record hands the usage to the UsageRecorder, with a context that
// outlives the request, since a client that left still consumed what the
// backend generated for it. It returns the cost to show.
func (t *turn) record(ctx context.Context, err error) int64 {
	t.recorded = true
	outcome := storage.OutcomeCompleted
	var ue *upstream.Error
	switch {
	case err == nil:
	case t.clientGone(ctx, err):
		outcome = storage.OutcomeClientGone
	case errors.As(err, &ue):
		outcome = storage.OutcomeUpstreamFailed
	default:
		outcome = storage.OutcomeFailed
	}
	fallback := t.cost()
	if t.usage.estimated {
		t.o.log.LogAttrs(ctx, slog.LevelWarn, "backend reported no usage for a round; usage estimated",
			slog.String("request_id", t.caller.RequestID))
	}
	if t.rounds == 0 || t.usage.prompt+t.usage.completion == 0 {
		return fallback // the backend did no work for this request
	}
	if t.o.cfg.Usage == nil {
		return fallback
	}
	chargeID := t.caller.ChargeID
	if chargeID == "" {
		chargeID = randomID() // a fresh id can never match an earlier charge
	}
	rec := storage.UsageRecord{
		AccountID: t.caller.AccountID, KeyID: t.caller.KeyID, RequestID: chargeID,
		EndUser: t.req.EndUser, SessionID: t.req.SessionID, Model: t.model(), Upstream: t.served.Upstream, Stream: t.req.Stream,
		PromptTokens: t.usage.prompt, CompletionTokens: t.usage.completion, AnswerTokens: t.usage.answer,
		Estimated: t.usage.estimated, Rounds: t.rounds, ToolCalls: t.toolCalls, Outcome: outcome,
		Started: t.started, Finished: t.o.cfg.Now(),
	}
	cost, rerr := t.o.cfg.Usage.RecordUsage(context.WithoutCancel(ctx), rec)
	if rerr != nil {
		t.o.log.LogAttrs(ctx, slog.LevelError, "recording usage",
			slog.String("request_id", t.caller.RequestID), slog.Any("error", rerr))
		return fallback
	}
	return cost
}

// streamOutput sends deltas to the event stream. Deltas sent before
// commit are held and sent right after the stream starts.
type streamOutput struct {
	w         eventStream
	t         *turn
	ctx       context.Context
	held      []wire.Delta
	committed bool

	stopOnce sync.Once
	stop     chan struct{}
	stopped  chan struct{}
}

func (s *streamOutput) commit() error {
	if s.committed {
		return nil
	}
	s.committed = true
	if err := s.w.Start(); err != nil {
		return errClientGone
	}
	for _, d := range s.held {
		if err := s.w.Send(d); err != nil {
			return errClientGone
		}
	}
	s.held = nil
	s.startHeartbeat()
	return nil
}

func (s *streamOutput) send(d wire.Delta) error { return s.write(d, s.w.Send) }

func (s *streamOutput) relay(d wire.Delta) error { return s.write(d, s.w.SendBuffered) }

// write holds d until the stream is committed, and from then on writes
// it with send.
func (s *streamOutput) write(d wire.Delta, send func(wire.Delta) error) error {
	if !s.committed {
		s.held = append(s.held, d)
		return nil
	}
	if err := send(d); err != nil {
		return errClientGone
	}
	return nil
}

func (s *streamOutput) flush() error {
	if !s.committed {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return errClientGone
	}
	return nil
}

// startHeartbeat keeps a silent stream alive: when nothing was sent for
// Heartbeat, it sends an act tick for the open activity, or an SSE
// comment when progress events are off or no activity is open.
func (s *streamOutput) startHeartbeat() {
	cfg := s.t.o.cfg
	ticks, stopTicker := cfg.NewTicker(cfg.Heartbeat / 2)
	s.stop = make(chan struct{})
	s.stopped = make(chan struct{})
	// A heartbeat that panics stops, logged and counted; the stream goes
	// on without it, and stopHeartbeat still finds it stopped.
	guard.Go(heartbeatGoroutine, func() {
		defer close(s.stopped)
		defer stopTicker()
		for {
			select {
			case <-s.stop:
				return
			case <-s.ctx.Done():
				return
			case <-ticks:
				if cfg.Now().Sub(s.w.IdleSince()) < cfg.Heartbeat {
					continue
				}
				if act := s.t.acts.tick(); act != nil && s.t.req.Progress {
					_ = s.w.Send(wire.Delta{Act: act})
				} else {
					_ = s.w.Comment("keepalive")
				}
			}
		}
	})
}

// heartbeatGoroutine names a stream's heartbeat as internal/guard counts
// its panics.
var heartbeatGoroutine = guard.Name("stream_heartbeat")

func (s *streamOutput) stopHeartbeat() {
	s.stopOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
			<-s.stopped
		}
	})
}

// jsonOutput collects a non-streaming answer: only the answer text and
// artifacts matter, and the turn keeps both.
type jsonOutput struct{}

func (*jsonOutput) commit() error          { return nil }
func (*jsonOutput) send(wire.Delta) error  { return nil }
func (*jsonOutput) relay(wire.Delta) error { return nil }
func (*jsonOutput) flush() error           { return nil }
