package demobackend

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// answerJSON sends c as one chat.completion document, after the time
// generating it would have taken.
func (s *Server) answerJSON(w http.ResponseWriter, r *http.Request, c *completion, reply Reply) {
	msg := messageJSON{Role: "assistant", ReasoningContent: c.reasonText()}
	if text := c.text(); text != "" || len(c.toolCalls) == 0 {
		msg.Content = &text
	}
	for _, tc := range c.toolCalls {
		msg.ToolCalls = append(msg.ToolCalls, toolCallJSON{ID: tc.ID, Type: "function",
			Function: functionJSON{Name: tc.Name, Arguments: tc.Arguments}})
	}
	body, err := json.Marshal(completionJSON{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices: []choiceJSON{{Index: 0, Message: msg, FinishReason: c.finish}},
		Usage:   c.usageJSON(),
	})
	if err != nil {
		apierror.Write(w, apierror.Internal())
		return
	}
	s.writeJSONAnswer(w, r, c, reply, append(body, '\n'))
}

// writeJSONAnswer sends body, the JSON document of c, after the time
// generating it would have taken, cut half way by reply.BreakAfter.
func (s *Server) writeJSONAnswer(w http.ResponseWriter, r *http.Request, c *completion, reply Reply, body []byte) {
	wait := s.opts.TimeToFirstToken
	if n := c.generated; n > 1 {
		wait += time.Duration(n-1) * s.opts.InterTokenDelay
	}
	if !sleep(r.Context(), wait) {
		abort()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	c.writing()
	if reply.BreakAfter > 0 {
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		abort()
	}
	if _, err := w.Write(body); err == nil {
		c.finished()
	}
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// abort closes the connection without finishing the response: net/http
// recovers this panic silently. It is how a Reply that fails drops the
// connection, and how an answer ends when the client has gone or the
// server is shutting down, so that a client still reading sees a broken
// response rather than an empty or truncated but well-formed one.
func abort() {
	panic(http.ErrAbortHandler)
}
