package billing

import (
	"encoding/json"
	"strings"
	"testing"
)

const usageStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"usage\":null}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"}}],\"usage\":null}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\n" +
	"data: [DONE]\n\n"

// feed writes s to m in pieces of n bytes and returns what m passed on.
func feed(m *Meter, s string, n int) string {
	var out strings.Builder
	for len(s) > 0 {
		k := min(n, len(s))
		out.Write(m.Write([]byte(s[:k])))
		s = s[k:]
	}
	return out.String()
}

func TestMeterStream(t *testing.T) {
	for _, n := range []int{1, 7, 64, len(usageStream)} {
		m := NewMeter(true, false)
		if out := feed(m, usageStream, n); out != usageStream {
			t.Fatalf("chunks of %d: stream changed:\n%s", n, out)
		}
		if p, c, est := m.Usage(); p != 12 || c != 2 || est {
			t.Fatalf("chunks of %d: usage %d %d %v", n, p, c, est)
		}
	}
}

func TestMeterDropsTheUsageChunkItAskedFor(t *testing.T) {
	want := strings.Replace(usageStream,
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\n", "", 1)
	for _, n := range []int{1, 5, 33, len(usageStream)} {
		m := NewMeter(true, true)
		if out := feed(m, usageStream, n); out != want {
			t.Fatalf("chunks of %d:\n%q\nwant\n%q", n, out, want)
		}
		if p, c, est := m.Usage(); p != 12 || c != 2 || est {
			t.Fatalf("usage %d %d %v", p, c, est)
		}
	}
}

func TestMeterEstimatesABrokenStream(t *testing.T) {
	m := NewMeter(true, false)
	feed(m, "data: {\"choices\":[{\"delta\":{\"content\":\"12345678\"}}]}\n\n", 3)
	if p, c, est := m.Usage(); p != 0 || c != 2 || !est {
		t.Fatalf("usage %d %d %v, want an estimate of 2 completion tokens", p, c, est)
	}
}

func TestMeterJSON(t *testing.T) {
	body := `{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`
	m := NewMeter(false, true)
	if out := feed(m, body, 10); out != body {
		t.Fatalf("JSON changed: %s", out)
	}
	if p, c, est := m.Usage(); p != 9 || c != 3 || est {
		t.Fatalf("usage %d %d %v", p, c, est)
	}
	m = NewMeter(false, false)
	feed(m, `{"object":"list","data":[]}`, 4)
	if _, _, est := m.Usage(); !est {
		t.Fatal("an answer without usage reported usage")
	}
}

func TestRequestUsage(t *testing.T) {
	tests := []struct {
		name            string
		body            string
		stream, dropped bool
		includeUsage    bool
	}{
		{"json", `{"model":"m","messages":[]}`, false, false, false},
		{"stream without options", `{"model":"m","stream":true}`, true, true, true},
		{"stream with other options", `{"stream":true,"stream_options":{"x":1}}`, true, true, true},
		{"stream asking for usage", `{"stream":true,"stream_options":{"include_usage":true}}`, true, false, true},
		{"stream false", `{"stream":false}`, false, false, false},
		{"not json", `stream=true`, false, false, false},
		{"malformed options", `{"stream":true,"stream_options":"yes"}`, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stream, dropped := RequestUsage([]byte(tt.body))
			if stream != tt.stream || dropped != tt.dropped {
				t.Fatalf("stream %v dropped %v", stream, dropped)
			}
			var req struct {
				StreamOptions map[string]any `json:"stream_options"`
			}
			_ = json.Unmarshal(out, &req)
			if got := req.StreamOptions["include_usage"] == true; got != tt.includeUsage {
				t.Fatalf("body %s: include_usage %v, want %v", out, got, tt.includeUsage)
			}
			if !dropped && string(out) != tt.body {
				t.Fatalf("body changed without need: %s", out)
			}
			if strings.Contains(tt.body, `"x":1`) && !strings.Contains(string(out), `"x":1`) {
				t.Fatalf("other stream options lost: %s", out)
			}
		})
	}
}
