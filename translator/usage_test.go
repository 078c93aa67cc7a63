package translator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/policy"
)

// shown is the usage object the client was shown.
type shown struct {
	Prompt     int64  `json:"prompt_tokens"`
	Completion int64  `json:"completion_tokens"`
	Total      int64  `json:"total_tokens"`
	Answer     *int64 `json:"answer_tokens"`
}

// usageShown reads the usage of a chat.completion or of the last chunk
// of a stream that carries one.
func usageShown(t *testing.T, body string) shown {
	t.Helper()
	var doc struct {
		Usage *shown `json:"usage"`
	}
	if !strings.HasPrefix(body, "data:") {
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.Usage == nil {
			t.Fatalf("no usage in %s (%v)", body, err)
		}
		return *doc.Usage
	}
	var last *shown
	for line := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		doc.Usage = nil
		if json.Unmarshal([]byte(data), &doc) == nil && doc.Usage != nil {
			last = doc.Usage
		}
	}
	if last == nil {
		t.Fatalf("no usage in the stream:\n%s", body)
	}
	return *last
}

// TestUsageFromAFaultyBackend: whatever counts a backend reports, the
// usage shown to the client and the one recorded for billing are
// normalised: no count negative, each round's at most
// billing.MaxReportedTokens, the request's at most
// billing.MaxRequestTokens, answer_tokens within the completion and the
// total the sum shown.
func TestUsageFromAFaultyBackend(t *testing.T) {
	const huge = 1 << 62
	tests := []struct {
		name                    string
		stream                  bool
		replies                 []demobackend.Reply
		wantPrompt, wantComplet int64
	}{
		{
			name:       "negative prompt in a stream",
			stream:     true,
			replies:    []demobackend.Reply{{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: -100, CompletionTokens: 30}}},
			wantPrompt: 0, wantComplet: 30,
		},
		{
			name:       "negative completion in a JSON answer",
			replies:    []demobackend.Reply{{Content: "Fine.", Usage: &demobackend.Usage{PromptTokens: 80, CompletionTokens: -1}}},
			wantPrompt: 80, wantComplet: 0,
		},
		{
			name:       "reasoning that is negative and a completion past the bound",
			stream:     true,
			replies:    []demobackend.Reply{{Content: "Fine.", UsageJSON: json.RawMessage(`{"prompt_tokens":7,"completion_tokens":1e40,"completion_tokens_details":{"reasoning_tokens":-5}}`)}},
			wantPrompt: 7, wantComplet: billing.MaxReportedTokens,
		},
		{
			name:   "rounds past the bound of a request",
			stream: true,
			replies: append(repeat(demobackend.Reply{ToolCalls: []demobackend.ToolCall{searchCall},
				Usage: &demobackend.Usage{PromptTokens: huge, CompletionTokens: huge, TotalTokens: -1}}, 11),
				demobackend.Reply{Content: "Done.", Usage: &demobackend.Usage{PromptTokens: huge, CompletionTokens: huge}}),
			wantPrompt: billing.MaxRequestTokens, wantComplet: billing.MaxRequestTokens,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Revision A: no cap ends the loop, and answer_tokens is shown.
			h := newHarness(t, harnessOptions{revision: policy.RevisionA, maxRounds: 12, tools: []registeredTool{searchTool()}})
			h.up.Enqueue(tt.replies...)
			extra := ""
			if tt.stream {
				extra = `"stream_options":{"include_usage":true}`
			}
			r := h.do(chatBody(tt.stream, "Go.", extra), withUser(nil))
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			u := usageShown(t, r.body)
			if u.Prompt != tt.wantPrompt || u.Completion != tt.wantComplet || u.Total != u.Prompt+u.Completion ||
				u.Answer == nil || *u.Answer < 0 || *u.Answer > u.Completion {
				t.Errorf("shown %+v (answer %v); want prompt %d, completion %d", u, deref(u.Answer), tt.wantPrompt, tt.wantComplet)
			}
			recs := h.recorder.all()
			if len(recs) != 1 || recs[0].PromptTokens != tt.wantPrompt || recs[0].CompletionTokens != tt.wantComplet ||
				recs[0].AnswerTokens < 0 || recs[0].AnswerTokens > recs[0].CompletionTokens {
				t.Errorf("recorded %+v", recs)
			}
		})
	}
}

func repeat(r demobackend.Reply, n int) []demobackend.Reply {
	out := make([]demobackend.Reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestUsageThatIsNoNumberIsNotBelieved: a usage count that is not a
// number makes its chunk malformed: the answer ends with an error, and the
// round is charged by estimate, not by the count.
func TestUsageThatIsNoNumberIsNotBelieved(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.up.Enqueue(demobackend.Reply{Content: "Fine.", UsageJSON: json.RawMessage(`{"prompt_tokens":"900000","completion_tokens":2}`)})
	r := h.do(chatBody(true, "Go.", `"stream_options":{"include_usage":true}`), withUser(nil))
	if !strings.Contains(r.body, CodeStreamInterrupted) {
		t.Errorf("the stream did not end with %s:\n%s", CodeStreamInterrupted, r.body)
	}
	recs := h.recorder.all()
	if len(recs) != 1 || !recs[0].Estimated || recs[0].PromptTokens == 900000 || recs[0].CompletionTokens == 0 {
		t.Errorf("recorded %+v; want an estimate", recs)
	}
}
