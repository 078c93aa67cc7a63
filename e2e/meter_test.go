package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// charges returns the charge entries of an account, newest first.
func charges(t *testing.T, e env, account string) []storage.LedgerEntry {
	t.Helper()
	settleLedgers(t)
	st := openStore(t, e)
	defer st.Close() // callers poll; keep no connections open between calls
	acct := accountNamed(t, st, account)
	return ledgerCharges(t, st, acct.ID)
}

// chargedSince returns the charges of an account beyond the first n.
func chargedSince(t *testing.T, e env, account string, n int) []storage.LedgerEntry {
	t.Helper()
	got := charges(t, e, account)
	if len(got) < n {
		t.Fatalf("%d charges, fewer than the %d before", len(got), n)
	}
	return got[:len(got)-n]
}

// chargedAtLeast is chargedSince once the account has at least want
// charges beyond the first n, or after 10 seconds: a client can read the
// last bytes of a large answer before the meter has handed its charge to
// the ledger writer (those bytes bypass the server's write buffer), so
// that the writer's empty queue does not yet mean the charge is in.
func chargedAtLeast(t *testing.T, e env, account string, n, want int) []storage.LedgerEntry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := chargedSince(t, e, account, n)
		if len(got) >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestV1IsCharged(t *testing.T) {
	scriptedBackends(t, func(t *testing.T, up *testupstream.Server, e env) {
		key := fundedKey(t, e, "legacy")
		mustCLI(t, e, "accounts", "topup", "--account", "legacy", "--usd", "1000", "--reference", "fund-more")
		g := startGateway(t, e)
		price := policy.ProfileFor(policy.RevisionB).Price
		big := &demobackend.Usage{PromptTokens: 200_000, CompletionTokens: 100_000, TotalTokens: 300_000}

		t.Run("a JSON answer is charged its usage under the server's id", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: big})
			status, h, body := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "json-1")
			if status != http.StatusOK || !strings.Contains(body, `"prompt_tokens":200000`) {
				t.Fatalf("JSON: %d %s", status, body)
			}
			// A JSON answer passes through whole: its length is kept.
			if cl := h.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
			}
			got := chargedSince(t, e, "legacy", before)
			if len(got) != 1 || got[0].AmountCents != -price(200_000, 100_000) {
				t.Fatalf("charges after a JSON answer: %+v (want %d cents)", got, price(200_000, 100_000))
			}
			if ref := got[0].Reference; !strings.HasPrefix(ref, "req:") || ref == "req:json-1" {
				t.Errorf("charge reference %q: want the server's own id, not the caller's", ref)
			}
		})

		t.Run("a repeated X-Request-Id is charged every time", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			for range 3 {
				up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: big})
				if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody, "X-Request-Id", "same-id"); status != 200 {
					t.Fatalf("%d %s", status, body)
				}
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 3 {
				t.Fatalf("3 requests with one X-Request-Id made %d charges", len(got))
			}
		})

		t.Run("a stream without usage asked is charged and shown none", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(demobackend.Reply{Content: "Streamed.", Usage: &demobackend.Usage{PromptTokens: 50_000, CompletionTokens: 50_000, TotalTokens: 100_000}})
			status, _, body := g.do("POST", "/v1/chat/completions", key, streamBody)
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
			if got := chargedSince(t, e, "legacy", before); len(got) != 1 || got[0].AmountCents != -price(50_000, 50_000) {
				t.Fatalf("charges after a stream: %+v", got)
			}
		})

		t.Run("a stream that asked for usage gets it unchanged", func(t *testing.T) {
			up.Enqueue(testupstream.Text("With usage."))
			_, _, body := g.do("POST", "/v1/chat/completions", key,
				`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			if !strings.Contains(body, `"choices":[]`) || !strings.Contains(body, `"prompt_tokens"`) {
				t.Fatalf("the usage chunk the client asked for is missing:\n%s", body)
			}
		})

		t.Run("Expect 100-continue is charged", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: big})
			req := newRequest(t, g, "POST", "/v1/chat/completions", key, chatBody)
			req.Header.Set("Expect", "100-continue")
			client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 1 || got[0].AmountCents != -price(200_000, 100_000) {
				t.Fatalf("charges after Expect: 100-continue: %+v", got)
			}
			if all := up.Requests(); all[len(all)-1].Header.Get("Expect") != "" {
				t.Errorf("Expect reached the backend: %q", all[len(all)-1].Header.Get("Expect"))
			}
		})

		t.Run("103 Early Hints then 200 is charged", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: big, EarlyHints: true})
			if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 1 || got[0].AmountCents != -price(200_000, 100_000) {
				t.Fatalf("charges after 103 then 200: %+v", got)
			}
		})

		t.Run("bodies the meter cannot read are refused", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			calls := len(up.ChatRequests())
			for _, body := range []string{
				`{"model":"m","stream":1,"messages":[{"role":"user","content":"hi"}]}`,
				`{"model":"m","stream":true,"temperature":NaN,"messages":[{"role":"user","content":"hi"}]}`,
				"\xEF\xBB\xBF" + streamBody,
				`{"model":"m","stream":true,"Stream":false,"messages":[{"role":"user","content":"hi"}]}`,
			} {
				status, _, out := g.do("POST", "/v1/chat/completions", key, body)
				if status != 400 || !strings.Contains(out, `"invalid_`) {
					t.Errorf("%q: %d %s, want 400 in the envelope", body, status, out)
				}
			}
			if n := len(up.ChatRequests()); n != calls {
				t.Errorf("%d refused bodies reached the backend", n-calls)
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 0 {
				t.Errorf("refused bodies were charged: %+v", got)
			}
		})

		t.Run("a stream sent as text/plain is refused, not passed on", func(t *testing.T) {
			before, calls := len(charges(t, e, "legacy")), len(up.Requests())
			status, _, body := g.do("POST", "/v1/chat/completions", key, streamBody, "Content-Type", "text/plain")
			wantError(t, "text/plain", status, body, http.StatusUnsupportedMediaType, "unsupported_media_type", "invalid_request_error")
			if n := len(up.Requests()) - calls; n != 0 {
				t.Errorf("%d requests reached the backend", n)
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 0 {
				t.Fatalf("charges: %+v", got)
			}
		})

		t.Run("an answer over 8 MiB is charged its usage", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(demobackend.Reply{Content: strings.Repeat("long answer ", 800_000), Usage: big})
			status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody)
			if status != 200 || len(body) < 8<<20 {
				t.Fatalf("%d, %d bytes", status, len(body))
			}
			got := chargedAtLeast(t, e, "legacy", before, 1)
			if len(got) != 1 || got[0].AmountCents != -price(200_000, 100_000) {
				t.Fatalf("charges after a large answer: %+v", got)
			}
		})

		t.Run("a stream the client cuts off is charged", func(t *testing.T) {
			// A backend that takes its time, so that the client leaves
			// long before the end.
			slow := testupstream.Start(t, demobackend.Options{InterTokenDelay: 20 * time.Millisecond})
			slow.Enqueue(demobackend.Reply{Content: strings.Repeat("token ", 400), Usage: big})
			g := startGateway(t, e.with("SWITCHYARD_UPSTREAM", slow.URL()))
			before := len(charges(t, e, "legacy"))
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", g.base+"/v1/chat/completions", strings.NewReader(streamBody))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("stream: %d", resp.StatusCode)
			}
			buf := make([]byte, 256)
			if _, err := io.ReadAtLeast(resp.Body, buf, 1); err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
			deadline := time.Now().Add(10 * time.Second)
			for len(charges(t, e, "legacy")) == before && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			got := chargedSince(t, e, "legacy", before)
			if len(got) != 1 || got[0].AmountCents >= 0 {
				t.Fatalf("charges after a cut-off stream: %+v", got)
			}
			if got[0].AmountCents == -price(200_000, 100_000) {
				t.Errorf("charged the full usage of a stream that was cut off: %+v", got[0])
			}
		})

		t.Run("a JSON answer the client leaves before it starts is charged", func(t *testing.T) {
			// The backend works on the answer before its first byte; the
			// client gives up meanwhile. The backend read the prompt.
			slow := testupstream.Start(t, demobackend.Options{InterTokenDelay: 20 * time.Millisecond})
			slow.Enqueue(demobackend.Reply{Content: strings.Repeat("token ", 13), Usage: big, BreakAfter: 13})
			g := startGateway(t, e.with("SWITCHYARD_UPSTREAM", slow.URL()))
			before := len(charges(t, e, "legacy"))
			// The client leaves once the backend has the request, not
			// after a set time: a gateway just started may take longer
			// than any such time to pass its first request on (a key
			// read, connections opened), and the client would then leave
			// a request the backend never saw.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for len(slow.ChatRequests()) == 0 && ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			req, _ := http.NewRequestWithContext(ctx, "POST", g.base+"/v1/chat/completions", strings.NewReader(chatBody))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("the client did not leave: %d", resp.StatusCode)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(slow.Served()) == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if len(slow.Served()) == 0 {
				t.Fatal("the backend never began the answer")
			}
			for len(charges(t, e, "legacy")) == before && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if got := chargedSince(t, e, "legacy", before); len(got) != 1 || got[0].AmountCents >= 0 {
				t.Fatalf("charges after the client left a served answer: %+v", got)
			}
		})

		t.Run("refused upstream and reads are free", func(t *testing.T) {
			before := len(charges(t, e, "legacy"))
			up.Enqueue(testupstream.Error(500, ""))
			if status, _, _ := g.do("POST", "/v1/chat/completions", key, chatBody); status != 500 {
				t.Fatalf("scripted failure answered %d", status)
			}
			g.do("GET", "/v1/models", key, "")
			if got := chargedSince(t, e, "legacy", before); len(got) != 0 {
				t.Fatalf("a failed request or a read was charged: %+v", got)
			}
		})
	})
}
