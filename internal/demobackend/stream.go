package demobackend

import (
	"encoding/json"
	"net/http"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// frame is one data frame of a stream. token marks frames that stand for
// a generated token and are therefore paced by InterTokenDelay.
type frame struct {
	chunk chunkJSON
	token bool
}

// frames lays c out the way OpenAI and vLLM stream it: a role chunk, the
// reasoning and content tokens, each tool call (id and name first, then
// its arguments in pieces), a chunk with finish_reason and an empty
// delta, and with include_usage a last chunk with no choices and the
// usage.
func (c *completion) frames(includeUsage bool) []frame {
	var usageNull json.RawMessage
	if includeUsage {
		usageNull = json.RawMessage("null")
	}
	choice := func(d deltaJSON, finish *string) chunkJSON {
		return chunkJSON{
			ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chunkChoiceJSON{{Index: 0, Delta: d, FinishReason: finish}},
			Usage:   usageNull,
		}
	}
	ptr := func(s string) *string { return &s }

	out := []frame{{chunk: choice(deltaJSON{Role: "assistant", Content: ptr("")}, nil)}}
	for _, t := range c.reasoning {
		out = append(out, frame{chunk: choice(deltaJSON{ReasoningContent: t}, nil), token: true})
	}
	for _, t := range c.content {
		out = append(out, frame{chunk: choice(deltaJSON{Content: ptr(t)}, nil), token: true})
	}
	for i, tc := range c.toolCalls {
		head := toolCallDeltaJSON{Index: i, ID: tc.ID, Type: "function", Function: functionDeltaJSON{Name: tc.Name}}
		out = append(out, frame{chunk: choice(deltaJSON{ToolCalls: []toolCallDeltaJSON{head}}, nil), token: true})
		for _, piece := range Tokens(tc.Arguments) {
			d := toolCallDeltaJSON{Index: i, Function: functionDeltaJSON{Arguments: piece}}
			out = append(out, frame{chunk: choice(deltaJSON{ToolCalls: []toolCallDeltaJSON{d}}, nil), token: true})
		}
	}
	out = append(out, frame{chunk: choice(deltaJSON{}, ptr(c.finish))})
	if includeUsage {
		out = append(out, frame{chunk: chunkJSON{
			ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
			Choices: []chunkChoiceJSON{}, Usage: c.usageJSON(),
		}})
	}
	return out
}

// stream sends c as server-sent events, flushing every frame, and stops
// as soon as the client goes away.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *ChatRequest, c *completion, reply Reply) {
	ctx := r.Context()
	if !sleep(ctx, s.opts.TimeToFirstToken) {
		abort()
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	frames := c.frames(req.includeUsage())
	firstToken := true
	buf := make([]byte, 0, 512)
	for i, f := range frames {
		if reply.BreakAfter > 0 && i == reply.BreakAfter {
			s.breakStream(w, reply)
			return
		}
		if f.token {
			if !firstToken && !sleep(ctx, s.opts.InterTokenDelay) {
				abort()
			}
			firstToken = false
		}
		b, err := json.Marshal(f.chunk)
		if err != nil {
			_ = apierror.WriteSSE(w, apierror.Internal())
			return
		}
		buf = append(append(append(buf[:0], "data: "...), b...), "\n\n"...)
		c.writing()
		if _, err := w.Write(buf); err != nil {
			abort()
		}
		if err := rc.Flush(); err != nil {
			abort()
		}
		// A flushed frame went out, even to a client that leaves the
		// moment it reads it: count it before looking whether the client
		// is still there.
		c.wrote(f.token)
		if ctx.Err() != nil {
			abort()
		}
	}
	if reply.BreakAfter > 0 {
		s.breakStream(w, reply)
		return
	}
	c.writing()
	if _, err := w.Write([]byte("data: [DONE]\n\n")); err == nil && rc.Flush() == nil {
		c.finished()
	}
}

// breakStream ends a stream early: with an error frame and [DONE] when
// the reply has a BreakError, otherwise by closing the connection so that
// the client reads an unexpected EOF.
func (s *Server) breakStream(w http.ResponseWriter, reply Reply) {
	if reply.BreakError != nil {
		_ = apierror.WriteSSE(w, reply.BreakError)
		return
	}
	_ = http.NewResponseController(w).Flush()
	abort()
}
