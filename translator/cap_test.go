package translator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/translator/upstream"
	"github.com/switchyardhq/switchyard/translator/wire"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/tools"
)

// expensiveSearch is a tool-call round that reports usage costing 400
// cents at the default prices (1M prompt tokens at $3, 100k completion
// tokens at $10), with some text before the call.
func expensiveSearch(text string) demobackend.Reply {
	r := testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameWebSearch, Arguments: `{"query":"more"}`})
	r.Content = text
	r.Usage = &demobackend.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000, TotalTokens: 1_100_000}
	return r
}

// A revision B request whose tool loop has cost the $5.00 cap starts no
// further round: the backend's work would be given away. It ends with the
// text it has and finish_reason "length", and the rounds it ran are
// charged at most the cap.
func TestToolLoopStopsAtTheChargeCap(t *testing.T) {
	cases := []struct {
		name       string
		revision   policy.Revision
		replies    []demobackend.Reply
		wantRounds int
		wantFinish string
		wantAnswer string
	}{
		{
			name:     "B stops after the round that reached the cap",
			revision: policy.RevisionB,
			replies: []demobackend.Reply{
				expensiveSearch("Searching."), expensiveSearch("Searching again."),
				expensiveSearch("Never asked."), testupstream.Text("Never asked either."),
			},
			wantRounds: 2, wantFinish: "length", wantAnswer: "Searching.\n\nSearching again.",
		},
		{
			name:     "B below the cap: the loop runs to the answer",
			revision: policy.RevisionB,
			replies: []demobackend.Reply{
				expensiveSearch("Searching."), testupstream.Text("Found it."),
			},
			wantRounds: 2, wantFinish: "stop", wantAnswer: "Searching.\n\nFound it.",
		},
		{
			name:     "A has no cap: the loop runs to the answer",
			revision: policy.RevisionA,
			replies: []demobackend.Reply{
				expensiveSearch("One."), expensiveSearch("Two."), expensiveSearch("Three."), testupstream.Text("Done."),
			},
			wantRounds: 4, wantFinish: "stop", wantAnswer: "One.\n\nTwo.\n\nThree.\n\nDone.",
		},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := tc.name + ", JSON"
			if stream {
				name = tc.name + ", stream"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, harnessOptions{
					revision: tc.revision,
					tools:    []registeredTool{nopTool(tools.NameWebSearch, tools.WebSearch)},
				})
				h.up.Enqueue(tc.replies...)
				r := h.do(chatBody(stream, "Research this thoroughly.", ""), nil)
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				if got := len(h.up.ChatRequests()); got != tc.wantRounds {
					t.Errorf("%d backend rounds, want %d", got, tc.wantRounds)
				}
				var answer, finish string
				if stream {
					f := checkStream(t, r.body, tc.revision == policy.RevisionB, true)
					answer, finish = f.content, f.finish
				} else {
					var c wire.Completion
					if err := json.Unmarshal([]byte(r.body), &c); err != nil {
						t.Fatal(err)
					}
					answer, finish = c.Choices[0].Message.Content, c.Choices[0].FinishReason
				}
				if answer != tc.wantAnswer || finish != tc.wantFinish {
					t.Errorf("answer %q finishing %q, want %q finishing %q", answer, finish, tc.wantAnswer, tc.wantFinish)
				}
				recs := h.recorder.all()
				if len(recs) != 1 {
					t.Fatalf("%d usage records", len(recs))
				}
				if recs[0].Rounds != tc.wantRounds {
					t.Errorf("record has %d rounds, want %d", recs[0].Rounds, tc.wantRounds)
				}
				p := h.profile
				charge := p.Price(recs[0].PromptTokens, recs[0].CompletionTokens)
				if p.MaxChargeCents > 0 && charge > p.MaxChargeCents {
					t.Errorf("charge %d above the cap %d", charge, p.MaxChargeCents)
				}
			})
		}
	}
}

// The prompt of a round whose backend reports no usage is estimated with
// the tokenizer, not by its length: two prompts of equal length, one of
// digits (three to a token) and one of words (five letters and a space to
// a token), are estimated far apart. (Estimates sit with the cap tests
// because both are about what a request is charged.)
func TestPromptEstimateCountsTokens(t *testing.T) {
	estimate := func(message string) int64 {
		_, recs := serveWithoutUsage(t, message, "ok")
		if len(recs) != 1 || !recs[0].Estimated {
			t.Fatalf("records %+v, want one estimated", recs)
		}
		return recs[0].PromptTokens
	}
	const n = 6000
	digits := estimate(strings.Repeat("1234567890", n/10))
	words := estimate(strings.Repeat(" hello", n/6))
	// 2,000 tokens of digits against 1,000 of words; the rest of the
	// prompt is the same for both.
	if diff := digits - words; diff < 900 || diff > 1100 {
		t.Errorf("prompt estimates %d (digits) and %d (words) differ by %d, want about 1000", digits, words, diff)
	}
}

// The running cost is priced at the request's model's prices: a model
// priced ten times the default reaches the cap after one round that
// another model pays 400 cents for.
func TestToolLoopCapUsesTheModelsPrices(t *testing.T) {
	for _, tc := range []struct {
		name       string
		model      string
		wantRounds int
	}{
		{name: "a dear model stops after one round", model: "svc-3", wantRounds: 1},
		{name: "another model costs the default prices", model: "svc-cheap", wantRounds: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{tools: []registeredTool{nopTool(tools.NameWebSearch, tools.WebSearch)}})
			h.profile.ModelPrices = map[string]policy.ModelPrice{"svc-3": {InputPerMTok: policy.CentsPerMTok(3000), OutputPerMTok: policy.CentsPerMTok(10000)}}
			u, err := upstream.New(upstream.Config{BaseURL: h.up.URL(), Model: "backend-model"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(u.Close)
			reg := &tools.Registry{}
			if err := reg.Register(tools.WebSearch, nopTool(tools.NameWebSearch, tools.WebSearch).tool); err != nil {
				t.Fatal(err)
			}
			h.orch, err = New(Config{Upstream: u, Profile: h.profile, Tools: reg, Usage: h.recorder, Now: h.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			h.up.Enqueue(expensiveSearch("Searching."), expensiveSearch("Again."), testupstream.Text("Done."))
			body := strings.Replace(chatBody(false, "Research this.", ""), `"svc-3"`, jsonString(tc.model), 1)
			if r := h.do(body, nil); r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if got := len(h.up.ChatRequests()); got != tc.wantRounds {
				t.Errorf("%d backend rounds, want %d", got, tc.wantRounds)
			}
		})
	}
}
