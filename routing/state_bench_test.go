package routing

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// benchBodies are /v1 bodies of the sizes the rewrite sees: a short chat,
// and one carrying an inline image, where a decode and re-encode costs
// most.
var benchBodies = []struct {
	name string
	body string
}{
	{"chat", `{"model":"alpha","messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"` + strings.Repeat("Tell me about pools. ", 40) + `"}],` +
		`"stream":true,"stream_options":{"include_usage":true},"max_tokens":512,"temperature":0.2}`},
	{"image", `{"model":"alpha","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 40000) + `"}}]}],` +
		`"max_tokens":256}`},
}

func BenchmarkStateBodyFor(b *testing.B) {
	for _, bb := range benchBodies {
		b.Run(bb.name, func(b *testing.B) {
			body := []byte(bb.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				s := NewState(body, "alpha")
				if _, err := s.BodyFor("org/alpha-7b-instruct"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpstreamOutgoing is a pool's work on a request once it chose
// the upstream: the request copied with the upstream's URL, Host, key
// and body, the body rewritten for the upstream's name of the model.
func BenchmarkUpstreamOutgoing(b *testing.B) {
	up, err := ParseUpstream("alpha", "http://10.0.0.5:8000/v1", "sk-upstream", "org/alpha-7b-instruct", "", 0)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(benchBodies[0].body)
	req := httptest.NewRequest("POST", "/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	req.Header.Set("Accept", "text/event-stream")
	b.ReportAllocs()
	for b.Loop() {
		s := NewState(body, "alpha")
		if _, _, err := up.Outgoing(req.WithContext(WithState(req.Context(), s))); err != nil {
			b.Fatal(err)
		}
	}
}
