package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
)

// TestBackendUsageIsNormalised: a backend that reports negative or
// absurd token counts neither ends the gateway nor reaches the client or
// the ledger as it is. On /v3 and /v1, streamed and not, a negative
// count is read as 0 and a count past billing.MaxReportedTokens as that
// bound; the client's usage object shows the normalised counts with a
// total that is their sum, the charge is the price of those counts, and
// the process goes on serving without having had to recover a panic.
func TestBackendUsageIsNormalised(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		key := fundedKey(t, e, "oddusage")
		// Two of the requests cost the cap.
		mustCLI(t, e, "accounts", "topup", "--account", "oddusage", "--usd", "100", "--reference", "fund-more")
		g := startGateway(t, e)
		price := policy.ProfileFor(policy.RevisionB).Price
		const huge = 1 << 62 // two of them overflow int64

		cases := []struct {
			name                 string
			path, body           string
			usage                demobackend.Usage
			rawUsage             string
			wantPrompt, wantComp int64
		}{
			{
				name: "negative counts on a /v3 stream",
				path: "/v3/chat/completions", body: `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
				usage:      demobackend.Usage{PromptTokens: -5000, CompletionTokens: 700, TotalTokens: -4300},
				wantPrompt: 0, wantComp: 700,
			},
			{
				name: "negative counts in a /v3 JSON answer",
				path: "/v3/chat/completions", body: `{"model":"svc-3","messages":[{"role":"user","content":"hi"}]}`,
				usage:      demobackend.Usage{PromptTokens: 1200, CompletionTokens: -3, TotalTokens: 1197},
				wantPrompt: 1200, wantComp: 0,
			},
			{
				name: "counts past any context window on /v3",
				path: "/v3/chat/completions", body: `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
				usage:      demobackend.Usage{PromptTokens: huge, CompletionTokens: huge, TotalTokens: -1},
				wantPrompt: billing.MaxReportedTokens, wantComp: billing.MaxReportedTokens,
			},
			{
				name: "a reasoning share above the completion on /v3",
				path: "/v3/chat/completions", body: `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
				rawUsage:   `{"prompt_tokens":40,"completion_tokens":10,"total_tokens":50,"completion_tokens_details":{"reasoning_tokens":-90}}`,
				wantPrompt: 40, wantComp: 10,
			},
			{
				name: "negative counts on /v1",
				path: "/v1/chat/completions", body: chatBody,
				usage:      demobackend.Usage{PromptTokens: -1, CompletionTokens: 2000, TotalTokens: 1999},
				wantPrompt: 0, wantComp: 2000,
			},
			{
				name: "counts past any context window on a /v1 stream",
				path: "/v1/chat/completions", body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
				usage:      demobackend.Usage{PromptTokens: huge, CompletionTokens: 5, TotalTokens: huge + 5},
				wantPrompt: billing.MaxReportedTokens, wantComp: 5,
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := len(charges(t, e, "oddusage"))
				reply := demobackend.Reply{Content: "Fine.", Usage: &c.usage}
				if c.rawUsage != "" {
					reply = demobackend.Reply{Content: "Fine.", UsageJSON: json.RawMessage(c.rawUsage)}
				}
				up.Enqueue(reply)
				status, _, body := g.do("POST", c.path, key, c.body)
				if status != http.StatusOK {
					t.Fatalf("%d %s", status, body)
				}
				if strings.HasPrefix(c.path, "/v3/") {
					u := lastUsage(t, body)
					if u.Prompt != c.wantPrompt || u.Completion != c.wantComp || u.Total != u.Prompt+u.Completion {
						t.Errorf("the client was shown usage %+v; want prompt %d, completion %d and their sum",
							u, c.wantPrompt, c.wantComp)
					}
				}
				got := chargedSince(t, e, "oddusage", before)
				if want := price(c.wantPrompt, c.wantComp); len(got) != 1 || got[0].AmountCents != -want {
					t.Fatalf("charges %+v; want one of %d cents", got, want)
				}
			})
		}

		select {
		case <-g.done:
			t.Fatalf("the gateway exited:\n%s", g.log.String())
		default:
		}
		up.Enqueue(testupstream.Text("Still here."))
		if status, _, body := g.do("POST", "/v3/chat/completions", key, `{"model":"svc-3","messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK || !strings.Contains(body, "Still here.") {
			t.Fatalf("after the odd usage: %d %s", status, body)
		}
		got := scrape(t, g)
		if _, ok := got[`switchyard_panics_recovered_total{goroutine="ledger_completions"}`]; !ok {
			t.Error("no switchyard_panics_recovered_total series for the ledger's completions")
		}
		for series, v := range got {
			if strings.HasPrefix(series, "switchyard_panics_recovered_total") && v != 0 {
				t.Errorf("%s = %v: the usage was not normalised before something panicked on it", series, v)
			}
		}
	})
}

// shownUsage is the usage object a /v3 client was shown.
type shownUsage struct {
	Prompt     int64 `json:"prompt_tokens"`
	Completion int64 `json:"completion_tokens"`
	Total      int64 `json:"total_tokens"`
}

// lastUsage reads the usage of a /v3 answer: a chat.completion, or the
// last usage of an event stream.
func lastUsage(t *testing.T, body string) shownUsage {
	t.Helper()
	var doc struct {
		Usage *shownUsage `json:"usage"`
	}
	if !strings.HasPrefix(body, "data:") {
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.Usage == nil {
			t.Fatalf("no usage in %s (%v)", body, err)
		}
		return *doc.Usage
	}
	var last *shownUsage
	for line := range strings.SplitSeq(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		doc.Usage = nil
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		if doc.Usage != nil {
			last = doc.Usage
		}
	}
	if last == nil {
		t.Fatalf("no usage in the stream:\n%s", body)
	}
	return *last
}
