package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/storage"
)

// TestRecordedDialects replays every recorded backend answer
// (translator/upstream/testdata/dialects) through the real binary: /v1
// relays it byte for byte and bills the usage in whatever shape it comes;
// /v3 turns its tool calls into artifacts, parallel calls too, never shows
// its reasoning, and ends a stream the backend broke with
// stream_interrupted and [DONE], billed for what was generated.
func TestRecordedDialects(t *testing.T) {
	up, e := scriptedEnv(t)
	g := startGateway(t, e)
	for _, rec := range testupstream.Recordings(t) {
		t.Run(rec.File, func(t *testing.T) {
			account := "dialect-" + strings.TrimSuffix(strings.TrimSuffix(rec.File, ".sse"), ".json")
			key := fundedKey(t, e, account)

			t.Run("v1", func(t *testing.T) {
				body := `{"model":"switchyard-demo","messages":[{"role":"user","content":"hi"}]}`
				if rec.Stream() {
					body = `{"model":"switchyard-demo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
				}
				up.Reset()
				up.Enqueue(up.Replay(rec))
				status, h, got := g.do("POST", "/v1/chat/completions", key, body, "Content-Type", "application/json")
				if status != 200 || got != string(rec.Body) {
					t.Fatalf("%d %s, want the recording byte for byte:\n%s\ngot:\n%s", status, h.Get("Content-Type"), rec.Body, got)
				}
				r := newestRecord(t, e, account, 1)
				if rec.Usage == nil || rec.Error != "" {
					if !r.Estimated || r.CompletionTokens <= 0 {
						t.Fatalf("record %+v, want an estimate above 0", r)
					}
					return
				}
				if r.Estimated || r.CompletionTokens != rec.Usage.Completion || r.PromptTokens != rec.Usage.Prompt {
					t.Fatalf("billed %d+%d (estimated %v), want the reported %d+%d",
						r.PromptTokens, r.CompletionTokens, r.Estimated, rec.Usage.Prompt, rec.Usage.Completion)
				}
			})

			t.Run("v3", func(t *testing.T) {
				up.Reset()
				up.Enqueue(up.Replay(rec))
				if len(rec.ToolCalls) > 0 {
					up.Enqueue(testupstream.Text("Done."))
				}
				status, stream := v3Stream(t, g, key, `{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Write it down."}]}`)
				if status != 200 {
					t.Fatalf("status %d: %s", status, stream)
				}
				evs := events(t, stream) // ends with [DONE], or fails
				if rec.Reasoning != "" && strings.Contains(stream, rec.Reasoning) {
					t.Errorf("the reasoning reached the client:\n%s", stream)
				}
				var content strings.Builder
				var interrupted bool
				for _, ev := range evs {
					if c, ok := delta(ev)["content"].(string); ok {
						content.WriteString(c)
					}
					if er, ok := ev["error"].(map[string]any); ok && er["code"] == "stream_interrupted" {
						interrupted = true
					}
				}
				if rec.Error != "" {
					if !interrupted || !strings.HasPrefix(content.String(), rec.Text) {
						t.Fatalf("want %q then stream_interrupted:\n%s", rec.Text, stream)
					}
					if r := newestRecord(t, e, account, 2); r.CompletionTokens <= 0 {
						t.Fatalf("a broken stream billed %+v, want what was generated", r)
					}
					return
				}
				if interrupted {
					t.Fatalf("interrupted:\n%s", stream)
				}
				arts := deltaKey(t, stream, "artifact")
				if len(arts) != len(rec.ToolCalls) {
					t.Fatalf("%d artifacts for %d tool calls:\n%s", len(arts), len(rec.ToolCalls), stream)
				}
				for i, a := range arts {
					if a["type"] != "document" || a["file_id"] == nil {
						t.Errorf("artifact %d: %v", i, keysOf(a))
					}
				}
				want := rec.Text
				if len(rec.ToolCalls) > 0 {
					want += "Done."
				}
				if got := content.String(); !strings.Contains(got, want) && got != rec.Text+"\n\nDone." {
					t.Errorf("content %q, want %q", got, want)
				}
				r := newestRecord(t, e, account, 2)
				if rec.Usage != nil && r.CompletionTokens < rec.Usage.Completion {
					t.Errorf("billed %d completion tokens, fewer than the %d reported", r.CompletionTokens, rec.Usage.Completion)
				}
			})
		})
	}
}

// newestRecord returns the latest usage record of account, which must
// have n of them by now.
func newestRecord(t *testing.T, e env, account string, n int) storage.UsageRecord {
	t.Helper()
	settleLedgers(t)
	st := openStore(t, e)
	defer st.Close()
	recs, err := st.UsageRecords(context.Background(), accountNamed(t, st, account).ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("%d usage records, want %d", len(recs), n)
	}
	return recs[0]
}
