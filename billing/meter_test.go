package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/tokenizer"
)

const usageStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"usage\":null}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"}}],\"usage\":null}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\n" +
	"data: [DONE]\n\n"

// feed writes s to a meter of a response of contentType in pieces of n
// bytes and returns what the meter passed on, the end included.
func feed(m *Meter, contentType, s string, n int) string {
	m.Start(contentType)
	var out strings.Builder
	for len(s) > 0 {
		k := min(n, len(s))
		out.Write(m.Write([]byte(s[:k])))
		s = s[k:]
	}
	out.Write(m.Close())
	return out.String()
}

func TestMeterStream(t *testing.T) {
	for _, n := range []int{1, 7, 64, len(usageStream)} {
		m := NewMeter(false)
		if out := feed(m, "text/event-stream; charset=utf-8", usageStream, n); out != usageStream {
			t.Fatalf("chunks of %d: stream changed:\n%s", n, out)
		}
		if u := m.Usage(); u != (Usage{Prompt: 12, Completion: 2}) {
			t.Fatalf("chunks of %d: usage %+v", n, u)
		}
	}
}

func TestMeterDropsTheUsageChunkItAskedFor(t *testing.T) {
	want := strings.Replace(usageStream,
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}}\n\n", "", 1)
	for _, n := range []int{1, 5, 33, len(usageStream)} {
		m := NewMeter(true)
		if out := feed(m, "text/event-stream", usageStream, n); out != want {
			t.Fatalf("chunks of %d:\n%q\nwant\n%q", n, out, want)
		}
		if u := m.Usage(); u != (Usage{Prompt: 12, Completion: 2}) {
			t.Fatalf("usage %+v", u)
		}
	}
}

func TestMeterReadsLoneCRAndMultiLineData(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\r" +
		"data: {\"choices\":[],\r" + "data: \"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}\r\r"
	m := NewMeter(false)
	feed(m, "text/event-stream", stream, 3)
	if u := m.Usage(); u != (Usage{Prompt: 5, Completion: 1}) {
		t.Fatalf("usage %+v, want 5 and 1 from a multi-line event with lone CR endings", u)
	}
}

// A stream is a stream because the answer says so, whatever the request
// asked: a backend that streams a request the meter took for JSON is
// still metered.
func TestMeterDecidesByContentType(t *testing.T) {
	m := NewMeter(false)
	feed(m, "text/event-stream", usageStream, 10)
	if u := m.Usage(); u.Estimated || u.Prompt != 12 {
		t.Fatalf("usage %+v", u)
	}
}

func TestMeterFlushesAFinalPartialLine(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]"
	m := NewMeter(true)
	if out := feed(m, "text/event-stream", stream, 4); out != stream {
		t.Fatalf("got %q, want the whole stream including its unterminated last line", out)
	}
}

// One long line used to be copied again on every write; now the work is
// linear. 16 MiB in 4 KiB writes must finish and relay every byte.
func TestMeterLongLineIsRelayedWhole(t *testing.T) {
	long := "data: " + strings.Repeat("x", 16<<20) + "\n\n"
	m := NewMeter(true)
	out := feed(m, "text/event-stream", long, 4096)
	if len(out) != len(long) {
		t.Fatalf("relayed %d of %d bytes", len(out), len(long))
	}
	if u := m.Usage(); !u.Estimated {
		t.Fatalf("usage %+v, want an estimate", u)
	}
}

func TestMeterEstimatesABrokenStream(t *testing.T) {
	m := NewMeter(false)
	feed(m, "text/event-stream", "data: {\"choices\":[{\"delta\":{\"content\":\"12345678\"}}]}\n\n", 3)
	// o200k_base splits digits in runs of three: 123 456 78.
	if u := m.Usage(); u != (Usage{Completion: 3, Estimated: true}) {
		t.Fatalf("usage %+v, want an estimate of 3 completion tokens", u)
	}
}

// A long answer without usage is estimated from the tokens of its first
// tokenizer.DefaultBudget bytes, and only those are kept.
func TestMeterEstimatesALongStreamByItsStart(t *testing.T) {
	const words = 20_000 // " hello" is one token
	var stream strings.Builder
	for range words / 100 {
		stream.WriteString(`data: {"choices":[{"delta":{"content":"` + strings.Repeat(" hello", 100) + `"}}]}` + "\n\n")
	}
	m := NewMeter(false)
	feed(m, "text/event-stream", stream.String(), 4096)
	if len(m.content) > tokenizer.DefaultBudget {
		t.Fatalf("kept %d bytes of answer text, more than %d", len(m.content), tokenizer.DefaultBudget)
	}
	u := m.Usage()
	if !u.Estimated || u.Completion < words || u.Completion > words*101/100 {
		t.Fatalf("usage %+v, want about %d estimated completion tokens", u, words)
	}
}

func TestMeterJSON(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Usage
	}{
		{name: "chat", body: `{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`, want: Usage{Prompt: 9, Completion: 3}},
		{name: "embeddings", body: `{"object":"list","data":[],"usage":{"prompt_tokens":7,"total_tokens":7}}`, want: Usage{Prompt: 7}},
		{name: "responses", body: `{"object":"response","output":[],"usage":{"input_tokens":40,"output_tokens":6,"total_tokens":46}}`, want: Usage{Prompt: 40, Completion: 6}},
		{name: "no usage is estimated from the answer's tokens", body: `{"object":"list","data":[]}`, want: Usage{Completion: 8, Estimated: true}},
		{name: "a usage that is null is none", body: `{"object":"list","data":[],"usage":null}`, want: Usage{Completion: 12, Estimated: true}},
		{name: "only the answer's own usage counts", body: `{"data":[{"usage":{"prompt_tokens":1}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`, want: Usage{Prompt: 5, Completion: 2}},
		{name: "a usage in a nested object is not the answer's", body: `{"data":[{"usage":{"prompt_tokens":1,"completion_tokens":1}}]}`, want: Usage{Completion: 17, Estimated: true}},
		{name: "an invalid answer is estimated", body: `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}`, want: Usage{Completion: 16, Estimated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeter(false)
			if out := feed(m, "application/json", tt.body, 10); out != tt.body {
				t.Fatalf("JSON changed: %s", out)
			}
			if u := m.Usage(); u != tt.want {
				t.Fatalf("usage %+v, want %+v", u, tt.want)
			}
		})
	}
}

// An answer far over the kept size still has its usage read, from its
// tail, and a "usage" inside the answer's text does not fool it.
func TestMeterLargeJSONReadsTheTail(t *testing.T) {
	content, _ := json.Marshal(strings.Repeat(`say "usage": {"prompt_tokens": 1} `, 400_000))
	body := `{"choices":[{"message":{"content":` + string(content) + `}}],"usage":{"prompt_tokens":1234,"completion_tokens":4321}}`
	if len(body) < 8<<20 {
		t.Fatalf("body of %d bytes is not large", len(body))
	}
	m := NewMeter(false)
	if out := feed(m, "application/json", body, 32<<10); len(out) != len(body) {
		t.Fatalf("relayed %d of %d bytes", len(out), len(body))
	}
	if u := m.Usage(); u != (Usage{Prompt: 1234, Completion: 4321}) {
		t.Fatalf("usage %+v", u)
	}
}

func TestParseV1(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		stream    bool
		dropUsage bool
		maxTokens int64
		wantCode  string
	}{
		{name: "json", body: `{"model":"m","messages":[]}`},
		{name: "stream without options", body: `{"model":"m","stream":true}`, stream: true, dropUsage: true},
		{name: "stream with other options", body: `{"stream":true,"stream_options":{"x":1}}`, stream: true, dropUsage: true},
		{name: "stream asking for usage", body: `{"stream":true,"stream_options":{"include_usage":true}}`, stream: true},
		{name: "stream false", body: `{"stream":false}`},
		{name: "stream null", body: `{"stream":null}`},
		{name: "max tokens", body: `{"max_tokens":300}`, maxTokens: 300},
		{name: "max completion tokens first", body: `{"max_completion_tokens":20,"max_tokens":300}`, maxTokens: 20},
		{name: "not json", body: `stream=true`, wantCode: "invalid_json"},
		{name: "a byte-order mark", body: "\xEF\xBB\xBF{\"stream\":true}", wantCode: "invalid_json"},
		{name: "NaN", body: `{"stream":true,"temperature":NaN}`, wantCode: "invalid_json"},
		{name: "stream as a number", body: `{"stream":1}`, wantCode: "invalid_parameter"},
		{name: "stream as a string", body: `{"stream":"true"}`, wantCode: "invalid_parameter"},
		{name: "a key in two cases", body: `{"stream":true,"Stream":false}`, wantCode: "invalid_json"},
		{name: "a key twice", body: `{"stream":false,"stream":true}`, wantCode: "invalid_json"},
		{name: "trailing data", body: `{"stream":false} {"stream":true}`, wantCode: "invalid_json"},
		{name: "an array", body: `[{"stream":true}]`, wantCode: "invalid_json"},
		{name: "malformed options", body: `{"stream":true,"stream_options":"yes"}`, wantCode: "invalid_parameter"},
		{name: "a long model", body: `{"model":"` + strings.Repeat("m", MaxModelChars+1) + `"}`, wantCode: "invalid_parameter"},
		{name: "negative max tokens", body: `{"max_tokens":-1}`, wantCode: "invalid_parameter"},
		// Backends that match keys case-insensitively (Go's encoding/json,
		// so Ollama) read these as the fields the meter would miss.
		{name: "model in capitals", body: `{"MODEL":"m","messages":[]}`, wantCode: "invalid_parameter"},
		{name: "stream capitalised", body: `{"model":"m","Stream":true}`, wantCode: "invalid_parameter"},
		{name: "stream with a long s", body: `{"model":"m","ſtream":true}`, wantCode: "invalid_parameter"},
		{name: "max tokens folded", body: `{"model":"m","MAX_TOKENS":300}`, wantCode: "invalid_parameter"},
		{name: "max tokens with a Kelvin sign", body: "{\"model\":\"m\",\"max_to\u212aens\":3}", wantCode: "invalid_parameter"},
		{name: "include_usage capitalised", body: `{"stream":true,"stream_options":{"Include_Usage":false}}`, wantCode: "invalid_parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := ParseV1([]byte(tt.body))
			if tt.wantCode != "" {
				var ae *apierror.Error
				if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != tt.wantCode {
					t.Fatalf("error %v, want 400 %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Stream != tt.stream || req.DropUsage != tt.dropUsage || req.MaxTokens != tt.maxTokens {
				t.Fatalf("got %+v", req)
			}
			var sent struct {
				StreamOptions map[string]any `json:"stream_options"`
			}
			if err := json.Unmarshal(req.Body, &sent); err != nil {
				t.Fatalf("body sent upstream is not JSON: %s", req.Body)
			}
			if tt.dropUsage && sent.StreamOptions["include_usage"] != true {
				t.Fatalf("usage not asked for: %s", req.Body)
			}
			if !tt.dropUsage && !bytes.Equal(req.Body, []byte(tt.body)) {
				t.Fatalf("body changed without need: %s", req.Body)
			}
			if strings.Contains(tt.body, `"x":1`) && !strings.Contains(string(req.Body), `"x":1`) {
				t.Fatalf("other stream options lost: %s", req.Body)
			}
		})
	}
}

// FuzzMeterUsage feeds arbitrary answers through the meter in pieces. It
// must not panic, must relay every byte when nothing is dropped, and
// must report the same usage however the answer was cut.
func FuzzMeterUsage(f *testing.F) {
	f.Add([]byte(usageStream), uint16(7), true)
	f.Add([]byte(`{"usage":{"prompt_tokens":9,"completion_tokens":3}}`), uint16(5), false)
	f.Add([]byte("data: {\"response\":{\"usage\":{\"input_tokens\":3}}}\r\r"), uint16(2), true)
	f.Fuzz(func(t *testing.T, answer []byte, step uint16, stream bool) {
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		whole := NewMeter(false)
		feed(whole, ct, string(answer), len(answer)+1)
		pieces := NewMeter(false)
		out := feed(pieces, ct, string(answer), int(step%64)+1)
		if out != string(answer) {
			t.Fatalf("relayed %q, want %q", out, answer)
		}
		if whole.Usage() != pieces.Usage() {
			t.Fatalf("usage %+v whole, %+v in pieces", whole.Usage(), pieces.Usage())
		}
		dropped := NewMeter(true)
		if out := feed(dropped, ct, string(answer), int(step%64)+1); len(out) > len(answer) {
			t.Fatalf("relayed more than was sent")
		}
	})
}

// FuzzMeterDeferral checks that leaving chunks that cannot carry usage
// undecoded changes nothing: the same bytes relayed and the same usage,
// reported or estimated, as decoding every chunk.
func FuzzMeterDeferral(f *testing.F) {
	f.Add([]byte(usageStream), uint16(7), false)
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi there\"}}],\"usage\":null}\n\n"), uint16(3), false)
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"Usage\" : {\"prompt_tokens\":2}}\n\n"), uint16(5), true)
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}],\"u\\u0073age\":{\"completion_tokens\":4}}\n\n"), uint16(9), false)
	f.Add([]byte("data: {\"delta\":\"x\"}\n\ndata: {\"RESPONSE\":{\"usage\":{\"output_tokens\":3}}}\n\n"), uint16(4), true)
	f.Add([]byte("data: {\"choices\":[{\"text\":\"t\"}],\"u\u017fage\":{\"completion_tokens\":6}}\n\n"), uint16(6), false)
	f.Add([]byte(responsesStream), uint16(11), false)
	f.Add([]byte("data: {\"type\":\"response.output_text.delta\",\"delta\":\"a b\"}\n\ndata: {\"Response\" :{\"usage\":{\"output_tokens\":2}}}\n\n"), uint16(8), false)
	f.Add([]byte("data: {\"type\":\"response.output_text.delta\",\"delta\":\"a b\"}\n\ndata: {\"response\":null}\n\n"), uint16(8), false)
	f.Fuzz(func(t *testing.T, answer []byte, step uint16, drop bool) {
		run := func(deferred bool) (string, Usage) {
			deferChunks = deferred
			defer func() { deferChunks = true }()
			m := NewMeter(drop)
			out := feed(m, "text/event-stream", string(answer), int(step%64)+1)
			return out, m.Usage()
		}
		outD, usageD := run(true)
		outE, usageE := run(false)
		if outD != outE || usageD != usageE {
			t.Fatalf("deferred: %q %+v; decoded at once: %q %+v", outD, usageD, outE, usageE)
		}
	})
}

// FuzzDecodeUsage holds decodeUsage to what encoding/json reads of the
// same usage object.
func FuzzDecodeUsage(f *testing.F) {
	for _, s := range []string{
		`{"prompt_tokens":12,"completion_tokens":40,"total_tokens":52}`,
		`{"input_tokens":3,"output_tokens":4,"input_tokens_details":{"cached_tokens":1}}`,
		`{"prompt_tokens":null,"completion_tokens":-2}`, `{"Prompt_Tokens":5}`, `{"prompt_tokens":1.0}`,
		`{"prompt_tokens":1e2}`, `{"prompt_tokens":"3"}`, `{"prompt_tokens":99999999999999999999}`,
		`{"prompt_tokens":1,"prompt_tokens":2}`, `{"prompt_tokens":1,"PROMPT_TOKENS":null}`, `{"prompt_\u0074okens":7}`,
		`{"output_` + "\u212a" + `":1}`, `null`, `[]`, `7`, `{}`, `{"prompt_tokens":-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return
		}
		var w *wireUsage
		want, wantOK := Usage{}, false
		if json.Unmarshal(v, &w) == nil {
			want, wantOK = w.counts()
		}
		if got, ok := decodeUsage(v); got != want || ok != wantOK {
			t.Fatalf("%s: decodeUsage %+v %v, encoding/json %+v %v", v, got, ok, want, wantOK)
		}
	})
}

// FuzzPlainUsageChunk holds plainUsageChunk to what readEvent reads of
// the same event with encoding/json: a chunk it reads is one that
// decodes, whose usage is the chunk's own and the same, and that has no
// choices.
func FuzzPlainUsageChunk(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":40,"total_tokens":52}}`,
		`{"choices":null,"usage":{"prompt_tokens":1}}`, `{"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[],"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
		`{"choices":[],"Usage":{"prompt_tokens":3}}`, `{"choices":[],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":1},"response":{"usage":{"input_tokens":5}}}`,
		`{"choices":"x","usage":{"prompt_tokens":1}}`, `{"choices":[],"usage":{"prompt_tokens":"1"}}`,
		`{"choices":[],"usage":{"prompt_tokens":1},"x_groq":{"usage":{"prompt_tokens":2}}}`,
		`{"choices":[],"usage":{"prompt_tokens":1},"delta":7}`, `{"choices":[],"usage":{"prompt_tokens":1.5}}`,
		`{"choices":[],"usage":{"total_tokens":1}}`, `{"ch\u006fices":[1],"usage":{"prompt_tokens":1}}`,
		`{"choices":[],"usage":{"prompt_tokens":1}`, `{"choices":[] ,"usage" : {"completion_tokens":2} }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := plainUsageChunk(data)
		if !ok {
			return // encoding/json reads it
		}
		var c streamChunk
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: plainUsageChunk %+v, encoding/json: %v", data, got, err)
		}
		want, inChunk, wantOK := c.usage()
		if !wantOK || !inChunk || want != got || len(c.Choices) != 0 {
			t.Fatalf("%s: plainUsageChunk %+v; encoding/json %+v, the chunk's own %v, found %v, %d choices",
				data, got, want, inChunk, wantOK, len(c.Choices))
		}
	})
}

// TestUsageChunkWithoutEncodingJSON: the usage chunks upstreams send
// are read without encoding/json, and without an allocation.
func TestUsageChunkWithoutEncodingJSON(t *testing.T) {
	for _, chunk := range []string{
		strings.TrimSuffix(strings.TrimPrefix(benchUsageChunk, "data: "), "\n\n"),
		`{"id":"chatcmpl-B","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","service_tier":"default",` +
			`"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,` +
			`"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
		`{"id":"x","choices":null,"usage":{"prompt_tokens":9,"completion_tokens":3}}`,
	} {
		data := []byte(chunk)
		u, ok := plainUsageChunk(data)
		if !ok || u.Prompt == 0 || u.Completion == 0 {
			t.Errorf("%s: read as %+v, %v", chunk, u, ok)
		}
		if n := testing.AllocsPerRun(10, func() { plainUsageChunk(data) }); n != 0 {
			t.Errorf("%s: %v allocations", chunk, n)
		}
	}
}
