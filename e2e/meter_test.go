package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// charges returns the charge entries of an account, newest first.
func charges(t *testing.T, e env, account string) []storage.LedgerEntry {
	t.Helper()
	st := openStore(t, e)
	ctx := context.Background()
	acct, err := st.AccountByName(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Entries(ctx, acct.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []storage.LedgerEntry
	for _, le := range all {
		if le.Kind == storage.EntryCharge {
			out = append(out, le)
		}
	}
	return out
}

func TestV1IsCharged(t *testing.T) {
	backends(t, func(t *testing.T, e env) {
		up := testupstream.Start(t, testupstream.Options{})
		e = e.with("SWITCHYARD_UPSTREAM", up.URL())
		key := fundedKey(t, e, "legacy")
		g := startGateway(t, e)
		price := policy.ProfileFor(policy.RevisionB).Price

		// A JSON answer: charged what its usage says.
		up.Enqueue(testupstream.Reply{Content: "Fine.", Usage: &testupstream.Usage{PromptTokens: 200_000, CompletionTokens: 100_000, TotalTokens: 300_000}})
		status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "json-1")
		if status != http.StatusOK || !strings.Contains(body, `"prompt_tokens":200000`) {
			t.Fatalf("JSON: %d %s", status, body)
		}
		got := charges(t, e, "legacy")
		if len(got) != 1 || got[0].AmountCents != -price(200_000, 100_000) || got[0].Reference != "req:json-1" {
			t.Fatalf("charges after a JSON answer: %+v (want %d cents)", got, price(200_000, 100_000))
		}

		// The same request id again is not charged twice.
		up.Enqueue(testupstream.Reply{Content: "Fine.", Usage: &testupstream.Usage{PromptTokens: 200_000, CompletionTokens: 100_000, TotalTokens: 300_000}})
		g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "json-1")
		if n := len(charges(t, e, "legacy")); n != 1 {
			t.Fatalf("a retried request id was charged again: %d charges", n)
		}

		// A stream that did not ask for usage: asked upstream, charged,
		// and the client's stream has no usage chunk.
		up.Enqueue(testupstream.Reply{Content: "Streamed.", Usage: &testupstream.Usage{PromptTokens: 50_000, CompletionTokens: 50_000, TotalTokens: 100_000}})
		status, _, body = g.do("POST", "/v1/chat/completions", key, streamBody, "X-Request-Id", "stream-1")
		if status != http.StatusOK || !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Fatalf("stream: %d %s", status, body)
		}
		if strings.Contains(body, `"choices":[]`) || strings.Contains(body, `"prompt_tokens"`) {
			t.Fatalf("the client got a usage chunk it did not ask for:\n%s", body)
		}
		last := up.ChatRequests()[len(up.ChatRequests())-1]
		if opts, _ := json.Marshal(last.StreamOptions); !strings.Contains(string(opts), `"include_usage":true`) {
			t.Fatalf("usage was not asked for upstream: %s", opts)
		}
		got = charges(t, e, "legacy")
		if len(got) != 2 || got[0].AmountCents != -price(50_000, 50_000) {
			t.Fatalf("charges after a stream: %+v", got)
		}

		// A stream that asked for usage gets it, unchanged.
		up.Enqueue(testupstream.Text("With usage."))
		_, _, body = g.do("POST", "/v1/chat/completions", key,
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
		if !strings.Contains(body, `"choices":[]`) || !strings.Contains(body, `"prompt_tokens"`) {
			t.Fatalf("the usage chunk the client asked for is missing:\n%s", body)
		}

		// Refused upstream: not charged.
		before := len(charges(t, e, "legacy"))
		up.Enqueue(testupstream.Error(500, ""))
		if status, _, _ := g.do("POST", "/v1/chat/completions", key, chatBody); status != 500 {
			t.Fatalf("scripted failure answered %d", status)
		}
		if n := len(charges(t, e, "legacy")); n != before {
			t.Fatalf("a failed request was charged")
		}
		// Reads are free.
		g.do("GET", "/v1/models", key, "")
		if n := len(charges(t, e, "legacy")); n != before {
			t.Fatalf("GET /v1/models was charged")
		}
	})
}
