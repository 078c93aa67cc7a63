package billing

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

const (
	benchContentChunk = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"svc-3\"," +
		"\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token\"},\"finish_reason\":null}],\"usage\":null}\n\n"
	benchUsageChunk = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"svc-3\"," +
		"\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":40,\"total_tokens\":52}}\n\n"
)

// BenchmarkMeterChunk is the usage extraction from one relayed /v1 stream
// chunk: a content chunk (kept for the estimate should no usage come), and
// the usage chunk, dropped when usage was asked for on the client's
// behalf.
func BenchmarkMeterChunk(b *testing.B) {
	for _, tc := range []struct {
		name, chunk string
		drop        bool
	}{
		{"content", benchContentChunk, false},
		{"usage", benchUsageChunk, false},
		{"usage dropped", benchUsageChunk, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := []byte(tc.chunk)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			var m *Meter
			for i := 0; b.Loop(); i++ {
				// A new response every 100 chunks, as streams are.
				if i%100 == 0 {
					m = NewMeter(tc.drop)
					m.Start("text/event-stream")
				}
				m.Write(p)
			}
			if tc.name != "content" && m.Usage().Completion != 40 {
				b.Fatalf("usage %+v", m.Usage())
			}
		})
	}
}

// benchStream is a whole /v1 stream as the bench relays it: 20 content
// chunks, the usage chunk and the end.
func benchStream() []byte {
	var stream []byte
	for range 20 {
		stream = append(stream, benchContentChunk...)
	}
	stream = append(stream, benchUsageChunk...)
	return append(stream, "data: [DONE]\n\n"...)
}

// BenchmarkMeterStream is the metering of a whole /v1 stream as the bench
// relays it: 20 content chunks, the usage chunk and the end.
func BenchmarkMeterStream(b *testing.B) {
	stream := benchStream()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		m := NewMeter(false)
		m.Start("text/event-stream")
		m.Write(stream)
		m.Close()
		if m.Usage().Completion != 40 {
			b.Fatalf("usage %+v", m.Usage())
		}
	}
}

// BenchmarkMeterStreamUsageAdded is BenchmarkMeterStream for a client
// that did not ask for usage: the meter asked for it on the client's
// behalf, and relays the stream without its usage chunk.
func BenchmarkMeterStreamUsageAdded(b *testing.B) {
	stream := benchStream()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		m := NewMeter(true)
		m.Start("text/event-stream")
		// A chunk a write, as a backend flushes them.
		for p := stream; len(p) > 0; {
			n := len(benchContentChunk)
			if len(p) < 2*n {
				n = len(p)
			}
			m.Write(p[:n])
			p = p[n:]
		}
		m.Close()
		if m.Usage().Completion != 40 {
			b.Fatalf("usage %+v", m.Usage())
		}
	}
}

// BenchmarkParseV1 is the strict parse of a short /v1 body by the limits
// probe.
func BenchmarkParseV1(b *testing.B) {
	body := []byte(`{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Benchmark me"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseV1(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseV1SDK is the strict parse of a /v1 body as OpenAI's SDKs
// send a stream: with a token limit and usage asked for.
func BenchmarkParseV1SDK(b *testing.B) {
	body := []byte(`{"messages":[{"role":"user","content":"Benchmark me"}],"model":"svc-3","max_completion_tokens":256,` +
		`"stream":true,"stream_options":{"include_usage":true},"temperature":0.7}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseV1(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseV1Image is the strict parse of a /v1 body with an inline
// image of 768 KiB, which the check of the body scans byte by byte.
func BenchmarkParseV1Image(b *testing.B) {
	body := []byte(`{"model":"svc-3","messages":[{"role":"user","content":[{"type":"text","text":"What is in it?"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 1<<15) + `"}}]}]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseV1(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmit is the admission of one billed streaming request on one
// node: the check of what the node knows before the body, then the rate,
// the stream slot and the balance hold built from the parse after it in
// one step, then the hold settled and the slot given back, as every such
// request does. The Redis limiter's round trip is in policy/limits'
// BenchmarkRedisAdmit.
func BenchmarkAdmit(b *testing.B) {
	prof := policy.ProfileFor(policy.RevisionB)
	prof.RequestsPerPeriod, prof.ConcurrentStreams, prof.Rolling = 1<<30, 1<<20, false
	lim := limits.NewLocal(limits.LocalConfig{})
	p := policy.Principal{KeyID: "key_1", AccountID: "acct_1", BalanceCents: 1 << 40}
	req, err := ParseV1([]byte(`{"model":"svc-3","stream":true,"messages":[{"role":"user","content":"Benchmark me"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	ask := AskV1(req)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lim.Precheck(BeforeBody(prof, p, ask.Meter)); err != nil {
			b.Fatal(err)
		}
		after, _ := AfterBody(prof, p, ask)
		adm, err := lim.Admit(ctx, after)
		if err != nil {
			b.Fatal(err)
		}
		adm.Hold.Settle(1)
		adm.Lease.Release()
	}
}

// benchAnswer is a short /v1 JSON answer, as OpenAI and vLLM shape it.
const benchAnswer = `{"id":"chatcmpl-000000000001","object":"chat.completion","created":1795493102,"model":"svc-3",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"Demo backend reply. Your message has 2 tokens (digest 7998e1ad): \"Benchmark me\"",` +
	`"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":18,"total_tokens":26}}`

// BenchmarkMeterAnswer is the usage extraction from a whole /v1 JSON
// answer, once per non-stream request.
func BenchmarkMeterAnswer(b *testing.B) {
	p := []byte(benchAnswer)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		m := NewMeter(false)
		m.Start("application/json")
		m.Write(p)
		if u := m.Usage(); u.Completion != 18 || u.Estimated {
			b.Fatalf("usage %+v", u)
		}
	}
}
