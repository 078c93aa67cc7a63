package demobackend

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// completion is a Reply resolved against its request: tokens split,
// tool-call ids assigned, the output limit applied and usage counted.
type completion struct {
	id        string
	created   int64
	model     string
	reasoning []string
	content   []string
	toolCalls []ToolCall
	finish    string
	usage     Usage
	rawUsage  []byte // Reply.UsageJSON: sent in place of usage
	generated int    // tokens produced, whatever usage reports
	progress  progress
}

func (s *Server) resolve(req *ChatRequest, r Reply, reqID uint64) *completion {
	c := &completion{
		id:        fmt.Sprintf("chatcmpl-%012d", reqID),
		created:   s.opts.now().Unix(),
		model:     req.Model,
		reasoning: Tokens(r.Reasoning),
		content:   Tokens(r.Content),
		progress:  progress{started: time.Now()},
	}
	for _, tc := range r.ToolCalls {
		if tc.ID == "" {
			tc.ID = "call_" + strconv.FormatUint(s.callSeq.Add(1), 10)
		}
		c.toolCalls = append(c.toolCalls, tc)
	}

	generated := len(c.reasoning) + len(c.content) + c.toolCallTokens()
	truncated := false
	if limit := req.maxCompletionTokens(); limit > 0 && generated > limit {
		// Reasoning counts against the limit, as it does on OpenAI and
		// vLLM; a cut answer never carries a half-written tool call.
		truncated = true
		c.toolCalls = nil
		if len(c.reasoning) > limit {
			c.reasoning = c.reasoning[:limit]
		}
		if keep := limit - len(c.reasoning); len(c.content) > keep {
			c.content = c.content[:keep]
		}
		generated = len(c.reasoning) + len(c.content)
	}

	c.generated = generated

	switch {
	case r.FinishReason != "":
		c.finish = r.FinishReason
	case truncated:
		c.finish = "length"
	case len(c.toolCalls) > 0:
		c.finish = "tool_calls"
	default:
		c.finish = "stop"
	}

	c.rawUsage = r.UsageJSON
	if r.Usage != nil {
		c.usage = *r.Usage
	} else {
		prompt := PromptTokens(req)
		c.usage = Usage{
			PromptTokens:     prompt,
			CompletionTokens: generated,
			TotalTokens:      prompt + generated,
			ReasoningTokens:  len(c.reasoning),
		}
	}
	return c
}

// usageJSON is the usage object the completion reports.
func (c *completion) usageJSON() json.RawMessage {
	if c.rawUsage != nil {
		return c.rawUsage
	}
	u, _ := json.Marshal(c.usage.wire())
	return u
}

func (c *completion) toolCallTokens() int {
	n := 0
	for _, tc := range c.toolCalls {
		n += CountTokens(tc.Name) + CountTokens(tc.Arguments)
	}
	return n
}

func (c *completion) text() string       { return join(c.content) }
func (c *completion) reasonText() string { return join(c.reasoning) }

func join(tokens []string) string {
	n := 0
	for _, t := range tokens {
		n += len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range tokens {
		b = append(b, t...)
	}
	return string(b)
}
