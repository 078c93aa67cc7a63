package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// fixedUpstream is a scripted upstream whose answers carry a fixed
// "created", so that two answers to one script differ only in their ids.
func fixedUpstream(t *testing.T) *testupstream.Server {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return testupstream.Start(t, demobackend.Options{Now: func() time.Time { return created }})
}

// answerIDs are the ids the demo backend numbers per request.
var answerIDs = regexp.MustCompile(`\b(resp|msg|fc|chatcmpl)[-_][0-9]+`)

// direct sends body to the upstream itself, as the gateway would, and
// returns the answer with its ids blanked.
func direct(t *testing.T, up *testupstream.Server, path, body string) string {
	t.Helper()
	resp, err := http.Post(up.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answerIDs.ReplaceAllString(string(b), "ID")
}

func blankIDs(s string) string { return answerIDs.ReplaceAllString(s, "ID") }

func responsesInput(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "m",
		Instructions: openai.String("Answer in one sentence."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(text)},
	}
}

func TestV1Responses(t *testing.T) {
	up := fixedUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "resp")
	g := startGateway(t, e)
	client := openaiClient(g, key, "/v1")
	price := policy.ProfileFor(policy.RevisionB).Price
	usage := &demobackend.Usage{PromptTokens: 120_000, CompletionTokens: 30_000, TotalTokens: 150_000}

	t.Run("openai-go's Responses client gets its answer, charged its usage", func(t *testing.T) {
		before := len(charges(t, e, "resp"))
		up.Enqueue(demobackend.Reply{Content: "Go is a language.", Usage: usage})
		resp, err := client.Responses.New(context.Background(), responsesInput("What is Go?"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.OutputText() != "Go is a language." || resp.Usage.InputTokens != 120_000 || resp.Usage.OutputTokens != 30_000 {
			t.Fatalf("answer %s", resp.RawJSON())
		}
		if _, ok := resp.Usage.JSON.ExtraFields["cost_cents"]; ok {
			t.Fatal("cost_cents without X-Include-Cost")
		}
		got := chargedSince(t, e, "resp", before)
		if len(got) != 1 || got[0].AmountCents != -price(120_000, 30_000) {
			t.Fatalf("charges %+v, want one of %d cents", got, price(120_000, 30_000))
		}
		last := up.Requests()[len(up.Requests())-1]
		if last.Path != "/v1/responses" || last.Chat == nil || last.Chat.LastUserText() != "What is Go?" {
			t.Fatalf("the backend got %s %s", last.Path, last.Body)
		}
	})

	t.Run("openai-go's Responses stream, charged the usage of response.completed", func(t *testing.T) {
		before := len(charges(t, e, "resp"))
		up.Enqueue(demobackend.Reply{Content: "Go is a language.", Usage: usage})
		stream := client.Responses.NewStreaming(context.Background(), responsesInput("What is Go?"))
		var text string
		var completed *responses.Response
		for stream.Next() {
			switch ev := stream.Current().AsAny().(type) {
			case responses.ResponseTextDeltaEvent:
				text += ev.Delta
			case responses.ResponseCompletedEvent:
				completed = &ev.Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if text != "Go is a language." || completed == nil || completed.Usage.OutputTokens != 30_000 {
			t.Fatalf("text %q, completed %+v", text, completed)
		}
		got := chargedSince(t, e, "resp", before)
		if len(got) != 1 || got[0].AmountCents != -price(120_000, 30_000) {
			t.Fatalf("charges %+v, want one of %d cents", got, price(120_000, 30_000))
		}
	})

	t.Run("requests and answers pass byte for byte", func(t *testing.T) {
		for _, body := range []string{
			`{"model":"m","input":"hi",  "max_output_tokens":50}`,
			`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true}`,
		} {
			up.Enqueue(testupstream.Text("Hello there."))
			status, h, got := g.do("POST", "/v1/responses", key, body)
			if status != 200 {
				t.Fatalf("%d %s", status, got)
			}
			last := up.Requests()[len(up.Requests())-1]
			if string(last.Body) != body {
				t.Errorf("the backend got\n%s\nnot\n%s", last.Body, body)
			}
			up.Enqueue(testupstream.Text("Hello there."))
			if want := direct(t, up, "/responses", body); blankIDs(got) != want {
				t.Errorf("the client got\n%s\nthe backend answers\n%s", got, want)
			}
			if strings.Contains(body, `"stream"`) {
				continue
			}
			if cl := h.Get("Content-Length"); cl != strconv.Itoa(len(got)) {
				t.Errorf("Content-Length %q for %d bytes", cl, len(got))
			}
		}
	})

	t.Run("a stream cut before response.completed is charged an estimate", func(t *testing.T) {
		before := len(charges(t, e, "resp"))
		up.Enqueue(demobackend.Reply{Content: strings.Repeat("word ", 50), BreakAfter: 10})
		status, _, _ := g.do("POST", "/v1/responses", key, `{"model":"m","input":"talk","stream":true}`)
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		if got := chargedSince(t, e, "resp", before); len(got) != 1 || got[0].AmountCents >= 0 {
			t.Fatalf("charges %+v, want one", got)
		}
		recs := usageRecords(t, e, "resp", len(charges(t, e, "resp")))
		var cut storage.UsageRecord
		for _, r := range recs {
			if r.Estimated {
				cut = r
			}
		}
		// Six deltas ("word " each) went out before the cut; the prompt is
		// the input's one token, not the body's.
		if !cut.Estimated || cut.CompletionTokens < 5 || cut.PromptTokens < 1 || cut.PromptTokens > 3 {
			t.Fatalf("the cut stream's record %+v of %+v", cut, recs)
		}
	})

	t.Run("what the gateway cannot meter or isolate is refused before the backend", func(t *testing.T) {
		before, calls := len(charges(t, e, "resp")), len(up.Requests())
		for _, tt := range []struct {
			what, method, path, body string
			header                   []string
			status                   int
			code                     string
		}{
			{"text/plain", "POST", "/v1/responses", `{"model":"m","input":"hi"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
			{"a query", "POST", "/v1/responses?stream=true", `{"model":"m","input":"hi"}`, nil, 400, "unsupported_parameter"},
			{"a stored response", "POST", "/v1/responses", `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, nil, 400, "unsupported_parameter"},
			{"a conversation", "POST", "/v1/responses", `{"model":"m","input":"hi","conversation":"conv_1"}`, nil, 400, "unsupported_parameter"},
			{"the background", "POST", "/v1/responses", `{"model":"m","input":"hi","background":true}`, nil, 400, "unsupported_parameter"},
			{"a hosted tool", "POST", "/v1/responses", `{"model":"m","input":"hi","tools":[{"type":"web_search"}]}`, nil, 400, "unsupported_parameter"},
			{"an item reference", "POST", "/v1/responses", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, nil, 400, "unsupported_parameter"},
			{"a key twice", "POST", "/v1/responses", `{"model":"m","input":"hi","Input":"ho"}`, nil, 400, "invalid_json"},
			{"reading a stored response", "GET", "/v1/responses/resp_1", "", nil, 404, "route_not_found"},
			{"deleting a stored response", "DELETE", "/v1/responses/resp_1", "", nil, 404, "route_not_found"},
			{"cancelling one", "POST", "/v1/responses/resp_1/cancel", `{}`, nil, 404, "route_not_found"},
		} {
			status, _, body := g.do(tt.method, tt.path, key, tt.body, tt.header...)
			wantError(t, tt.what, status, body, tt.status, tt.code, "invalid_request_error")
		}
		if n := len(up.Requests()) - calls; n != 0 {
			t.Errorf("%d refused requests reached the backend", n)
		}
		if got := chargedSince(t, e, "resp", before); len(got) != 0 {
			t.Errorf("refused requests were charged: %+v", got)
		}
	})

	t.Run("openai-go's Responses client reads the errors", func(t *testing.T) {
		params := responsesInput("hi")
		params.PreviousResponseID = openai.String("resp_1")
		_, err := client.Responses.New(context.Background(), params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "unsupported_parameter" {
			t.Fatalf("a stored response: %v", err)
		}
		// The backend's own refusal passes through, and costs nothing.
		before := len(charges(t, e, "resp"))
		up.Enqueue(testupstream.Error(http.StatusTooManyRequests, ""))
		_, err = client.Responses.New(context.Background(), responsesInput("hi"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
			t.Fatalf("the backend's 429: %v", err)
		}
		up.Enqueue(testupstream.Error(http.StatusServiceUnavailable, ""))
		stream := client.Responses.NewStreaming(context.Background(), responsesInput("hi"))
		for stream.Next() {
			t.Fatalf("an event of a refused stream: %s", stream.Current().RawJSON())
		}
		if err := stream.Err(); !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
			t.Fatalf("the backend's 503 to a stream: %v", err)
		}
		if got := chargedSince(t, e, "resp", before); len(got) != 0 {
			t.Fatalf("refusals were charged: %+v", got)
		}
	})

	t.Run("without a key", func(t *testing.T) {
		status, _, body := g.do("POST", "/v1/responses", "", `{"model":"m","input":"hi"}`)
		wantError(t, "no key", status, body, 401, "invalid_api_key", "invalid_request_error")
	})
}

// max_output_tokens sizes the hold. Revision A has no cap, so a request
// for two million output tokens ($20) holds the whole $10 balance while it
// runs, and another request meanwhile finds nothing to hold; one for two
// thousand holds a few cents and leaves room.
func TestV1ResponsesHoldsMaxOutputTokens(t *testing.T) {
	up, e := scriptedEnv(t, "SWITCHYARD_REVISION", "A")
	key := fundedKey(t, e, "holds")
	g := startGateway(t, e)
	for _, tt := range []struct {
		maxTokens  int
		wantStatus int
	}{{2_000, http.StatusOK}, {2_000_000, http.StatusPaymentRequired}} {
		up.Enqueue(demobackend.Reply{Content: "Slow.", Delay: 1500 * time.Millisecond})
		calls := len(up.Requests())
		done := make(chan int)
		go func() {
			req := newRequest(t, g, "POST", "/v1/responses", key,
				`{"model":"m","input":"hi","max_output_tokens":`+strconv.Itoa(tt.maxTokens)+`}`)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Logf("%s", b)
			}
			done <- resp.StatusCode
		}()
		for deadline := time.Now().Add(5 * time.Second); len(up.Requests()) == calls; {
			if time.Now().After(deadline) {
				t.Fatalf("the first request did not reach the backend: %d", <-done)
			}
			time.Sleep(10 * time.Millisecond)
		}
		status, _, body := g.do("POST", "/v1/chat/completions", key, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
		if status != tt.wantStatus {
			t.Errorf("beside a request for %d tokens: %d %s, want %d", tt.maxTokens, status, body, tt.wantStatus)
		}
		if first := <-done; first != http.StatusOK {
			t.Fatalf("the request for %d tokens: %d", tt.maxTokens, first)
		}
		// The hold lasts until the charge is committed.
		settleLedgers(t)
	}
}

// costOf reads cost_cents from the usage object at path in doc.
func costOf(t *testing.T, doc string, path ...string) (int64, bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	for _, p := range append(path, "cost_cents") {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		if v, ok = m[p]; !ok {
			return 0, false
		}
	}
	f, ok := v.(float64)
	return int64(f), ok
}

// sseData returns the data of the stream's events that mention substr.
func sseData(stream, substr string) []string {
	var out []string
	for _, line := range strings.Split(stream, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, substr) {
			out = append(out, d)
		}
	}
	return out
}

func TestV1IncludeCost(t *testing.T) {
	up := fixedUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "cost")
	g := startGateway(t, e)
	price := policy.ProfileFor(policy.RevisionB).Price
	usage := &demobackend.Usage{PromptTokens: 100_000, CompletionTokens: 20_000, TotalTokens: 120_000}
	want := price(100_000, 20_000)
	const cost = "X-Include-Cost"

	charged := func(t *testing.T, before int) int64 {
		t.Helper()
		got := chargedSince(t, e, "cost", before)
		if len(got) != 1 {
			t.Fatalf("charges %+v, want one", got)
		}
		return -got[0].AmountCents
	}

	t.Run("chat JSON", func(t *testing.T) {
		before := len(charges(t, e, "cost"))
		up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
		status, h, body := g.do("POST", "/v1/chat/completions", key, chatBody, cost, "1")
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if c, ok := costOf(t, body, "usage"); !ok || c != want || c != charged(t, before) {
			t.Fatalf("cost_cents %d (%v), want %d, the charge:\n%s", c, ok, want, body)
		}
		if cl := h.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
			t.Errorf("Content-Length %q for %d bytes", cl, len(body))
		}
	})

	t.Run("without the header, and with another value, bodies pass byte for byte", func(t *testing.T) {
		for _, header := range [][]string{nil, {cost, "0"}, {cost, "yes"}} {
			for _, body := range []string{chatBody, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`} {
				up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
				_, _, got := g.do("POST", "/v1/chat/completions", key, body, header...)
				up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
				if want := direct(t, up, "/chat/completions", body); blankIDs(got) != want {
					t.Errorf("%v: the client got\n%s\nthe backend answers\n%s", header, got, want)
				}
			}
		}
		up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
		_, _, got := g.do("POST", "/v1/responses", key, `{"model":"m","input":"hi"}`)
		up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
		if want := direct(t, up, "/responses", `{"model":"m","input":"hi"}`); blankIDs(got) != want || strings.Contains(got, "cost_cents") {
			t.Errorf("the client got\n%s\nthe backend answers\n%s", got, want)
		}
	})

	t.Run("a chat stream's usage chunk", func(t *testing.T) {
		for _, body := range []string{
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
			// No include_usage: the header asks for the usage chunk too.
			streamBody,
		} {
			before := len(charges(t, e, "cost"))
			up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
			status, _, got := g.do("POST", "/v1/chat/completions", key, body, cost, "1")
			if status != 200 || !strings.HasSuffix(got, "data: [DONE]\n\n") {
				t.Fatalf("%d %s", status, got)
			}
			chunks := sseData(got, `"usage":{`)
			if len(chunks) != 1 {
				t.Fatalf("%d usage chunks:\n%s", len(chunks), got)
			}
			if c, ok := costOf(t, chunks[0], "usage"); !ok || c != want || c != charged(t, before) {
				t.Fatalf("cost_cents %d (%v), want %d, the charge:\n%s", c, ok, want, got)
			}
			if n := strings.Count(got, "cost_cents"); n != 1 {
				t.Fatalf("cost_cents %d times", n)
			}
		}
	})

	t.Run("openai-go's Responses client reads it", func(t *testing.T) {
		client := openaiClient(g, key, "/v1")
		before := len(charges(t, e, "cost"))
		up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
		resp, err := client.Responses.New(context.Background(), responsesInput("hi"), option.WithHeader(cost, "1"))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := resp.Usage.JSON.ExtraFields["cost_cents"]
		if !ok || f.Raw() != strconv.FormatInt(want, 10) || want != charged(t, before) {
			t.Fatalf("usage %s, want cost_cents %d", resp.Usage.RawJSON(), want)
		}

		before = len(charges(t, e, "cost"))
		up.Enqueue(demobackend.Reply{Content: "Fine.", Usage: usage})
		stream := client.Responses.NewStreaming(context.Background(), responsesInput("hi"), option.WithHeader(cost, "1"))
		var completed *responses.Response
		for stream.Next() {
			if ev, ok := stream.Current().AsAny().(responses.ResponseCompletedEvent); ok {
				completed = &ev.Response
			}
		}
		if err := stream.Err(); err != nil || completed == nil {
			t.Fatalf("%v, completed %v", err, completed)
		}
		f, ok = completed.Usage.JSON.ExtraFields["cost_cents"]
		if !ok || f.Raw() != strconv.FormatInt(want, 10) || want != charged(t, before) {
			t.Fatalf("usage %s, want cost_cents %d", completed.Usage.RawJSON(), want)
		}
	})
}

// A Responses stream takes one of the key's stream slots, as a chat
// stream does: revision B allows five at once.
func TestV1ResponsesStreamsTakeSlots(t *testing.T) {
	up := slowUpstream(t)
	e := embeddedEnv(t, up.URL())
	key := fundedKey(t, e, "slots")
	g := startGateway(t, e)
	statuses := parallelStreams(t, g, key, "/v1/responses", 6, `{"model":"m","input":"hi","stream":true}`, "application/json")
	if statuses[http.StatusOK] != 5 || statuses[http.StatusTooManyRequests] != 1 {
		t.Fatalf("statuses %v, want five streams and one 429", statuses)
	}
}

// With model pools the cost shown is the served model's price, as the
// charge is, also in a stream, whose usage passes while the pool still
// answers: alpha's upstream fails, and beta, ten thousand times dearer,
// answers.
func TestV1IncludeCostOfAFallback(t *testing.T) {
	a, f := startBackend(t, demobackend.Options{}), startBackend(t, demobackend.Options{})
	g, e, key := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %s
			price 0.10 0.10
			fallback beta
		}
		model beta {
			upstream %s
			price 1000 2000
		}`, a.url(), f.url()))
	a.Respond(func(*demobackend.Request) (demobackend.Reply, bool) {
		return testupstream.Error(503, `{"error":{"message":"overloaded"}}`), true
	})
	usage := &demobackend.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}
	// $1000 and $2000 per million tokens: 100 + 100 cents at beta's
	// prices; alpha's would make it the 1-cent minimum.
	const want = 200
	for _, tt := range []struct{ path, body, event string }{
		{"/v1/chat/completions", streamFor("alpha", "hi"), `"choices":[]`},
		{"/v1/responses", `{"model":"alpha","input":"hi","stream":true}`, `"response.completed"`},
	} {
		before := len(charges(t, e, "router"))
		f.Enqueue(demobackend.Reply{Content: "From the fallback.", Usage: usage})
		status, _, body := g.do("POST", tt.path, key, tt.body, "X-Include-Cost", "1")
		if status != 200 {
			t.Fatalf("%s: %d %s", tt.path, status, body)
		}
		events := sseData(body, tt.event)
		if len(events) != 1 {
			t.Fatalf("%s: %d usage events:\n%s", tt.path, len(events), body)
		}
		path := []string{"usage"}
		if tt.path == "/v1/responses" {
			path = []string{"response", "usage"}
		}
		got := chargedSince(t, e, "router", before)
		if c, ok := costOf(t, events[0], path...); !ok || c != want || len(got) != 1 || -got[0].AmountCents != want {
			t.Fatalf("%s: cost_cents %d (%v), charges %+v, want %d", tt.path, c, ok, got, want)
		}
	}
}
