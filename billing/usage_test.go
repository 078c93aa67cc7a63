package billing

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
)

func TestUsageNormalized(t *testing.T) {
	tests := []struct {
		name    string
		in, out Usage
	}{
		{name: "plausible counts are kept", in: Usage{Prompt: 1200, Completion: 300, Reasoning: 100}, out: Usage{Prompt: 1200, Completion: 300, Reasoning: 100}},
		{name: "negative counts are 0", in: Usage{Prompt: -5, Completion: -1, Reasoning: -7}, out: Usage{}},
		{name: "counts past the bound are the bound", in: Usage{Prompt: math.MaxInt64, Completion: MaxReportedTokens + 1}, out: Usage{Prompt: MaxReportedTokens, Completion: MaxReportedTokens}},
		{name: "reasoning is part of the completion", in: Usage{Completion: 10, Reasoning: 90}, out: Usage{Completion: 10, Reasoning: 10}},
		{name: "reasoning of a negative completion", in: Usage{Completion: -10, Reasoning: 5}, out: Usage{}},
		{name: "an estimate stays one", in: Usage{Prompt: math.MinInt64, Estimated: true}, out: Usage{Estimated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.Normalized(); got != tt.out {
				t.Errorf("Normalized(%+v) = %+v, want %+v", tt.in, got, tt.out)
			}
			if got := tt.out.Normalized(); got != tt.out {
				t.Errorf("normalising twice changed %+v to %+v", tt.out, got)
			}
		})
	}
}

func TestUsagePlusBoundsTheRequest(t *testing.T) {
	var total Usage
	total = total.Plus(Usage{Prompt: 1000, Completion: -50, Reasoning: 20})
	total = total.Plus(Usage{Prompt: 500, Completion: 40, Reasoning: 10, Estimated: true})
	if want := (Usage{Prompt: 1500, Completion: 40, Reasoning: 10, Estimated: true}); total != want {
		t.Fatalf("sum %+v, want %+v: the first round's reasoning above its completion is cut to it", total, want)
	}
	// Rounds at the bound of a report add up to the bound of a request,
	// never past it, however many there are.
	for range 25 {
		total = total.Plus(Usage{Prompt: math.MaxInt64, Completion: math.MaxInt64, Reasoning: math.MaxInt64})
	}
	if want := (Usage{Prompt: MaxRequestTokens, Completion: MaxRequestTokens, Reasoning: MaxRequestTokens, Estimated: true}); total != want {
		t.Fatalf("sum %+v, want %+v", total, want)
	}
	// A running total that did not come from Plus is bounded too.
	if got := (Usage{Prompt: -9, Completion: math.MaxInt64}).Plus(Usage{Prompt: 1}); got != (Usage{Prompt: 1, Completion: MaxRequestTokens}) {
		t.Fatalf("sum %+v", got)
	}
}

func TestTokenCountJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "12", want: 12},
		{in: "-3", want: -3},
		{in: "-0", want: 0},
		{in: "1.0", want: 1},
		{in: "12.25", want: 13},
		{in: "1e2", want: 100},
		{in: "1E+30", want: math.MaxInt64},
		{in: "99999999999999999999", want: math.MaxInt64},
		{in: "-99999999999999999999", want: math.MinInt64},
		{in: "-1e400", want: math.MinInt64},
		{in: `"12"`, wantErr: true},
		{in: `true`, wantErr: true},
		{in: `{"n":1}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var n struct {
				N TokenCount `json:"n"`
			}
			err := json.Unmarshal([]byte(`{"n":`+tt.in+`}`), &n)
			if (err != nil) != tt.wantErr || !tt.wantErr && int64(n.N) != tt.want {
				t.Errorf("%s: %d, %v; want %d (error %v)", tt.in, n.N, err, tt.want, tt.wantErr)
			}
		})
	}
	// null leaves the count as it was.
	n := TokenCount(7)
	if err := json.Unmarshal([]byte("null"), &n); err != nil || n != 7 {
		t.Errorf("null: %d, %v", n, err)
	}
}

// TestMeterNormalizesUsage: what the /v1 meter reads from a backend that
// reports negative, absurd or sloppily encoded counts is normalised, in
// a JSON answer, a stream and a Responses API answer alike.
func TestMeterNormalizesUsage(t *testing.T) {
	huge := strconv.FormatInt(math.MaxInt64, 10)
	tests := []struct {
		name, contentType, body string
		want                    Usage
	}{
		{name: "negative counts", contentType: "application/json",
			body: `{"choices":[],"usage":{"prompt_tokens":-40,"completion_tokens":7}}`, want: Usage{Completion: 7}},
		{name: "counts past the bound", contentType: "application/json",
			body: `{"choices":[],"usage":{"prompt_tokens":` + huge + `,"completion_tokens":1e30}}`,
			want: Usage{Prompt: MaxReportedTokens, Completion: MaxReportedTokens}},
		{name: "fractions", contentType: "application/json",
			body: `{"object":"response","usage":{"input_tokens":10.0,"output_tokens":2.5}}`, want: Usage{Prompt: 10, Completion: 3}},
		{name: "a negative stream", contentType: "text/event-stream",
			body: "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":-99999}}\n\ndata: [DONE]\n\n",
			want: Usage{Prompt: 5}},
		{name: "a count that is no number is not believed", contentType: "application/json",
			body: `{"choices":[],"usage":{"prompt_tokens":"9000","completion_tokens":1}}`, want: Usage{Estimated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeter(false)
			feed(m, tt.contentType, tt.body, 9)
			got := m.Usage()
			if tt.want.Estimated {
				// The estimate's completion is the answer's tokens,
				// whatever the usage object claimed.
				got.Completion = 0
			}
			if got != tt.want {
				t.Errorf("usage %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestV1RecordNormalizes(t *testing.T) {
	rec, ok := V1Record(V1Exchange{Status: 200, Usage: Usage{Prompt: -1, Completion: math.MaxInt64}})
	if !ok || rec.PromptTokens != 0 || rec.CompletionTokens != MaxReportedTokens {
		t.Fatalf("record %+v, %v", rec, ok)
	}
}

// TestV1RecordOfAClientThatLeft: a client that left before the answer
// began owes the prompt, whether the proxy noted no status or Caddy's
// 499; a backend's refusal the client did not wait for owes nothing.
func TestV1RecordOfAClientThatLeft(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"Tell me about the harbour."}]}`)
	for _, tt := range []struct {
		status  int
		charged bool
	}{{0, true}, {StatusClientClosedRequest, true}, {400, false}, {502, false}} {
		rec, ok := V1Record(V1Exchange{Status: tt.status, ClientGone: true, Request: V1Request{Body: body, Model: "m"}})
		if ok != tt.charged {
			t.Errorf("status %d: charged %v, want %v", tt.status, ok, tt.charged)
			continue
		}
		if ok && (!rec.Estimated || rec.PromptTokens == 0 || rec.Outcome != storage.OutcomeClientGone) {
			t.Errorf("status %d: record %+v, want the prompt estimated", tt.status, rec)
		}
	}
}

// FuzzTokenCount holds TokenCount to the number a JSON count is: any
// JSON number is read, and once normalised it is 0 for a number at or
// below 0, the bound for one at or above the bound, and the number
// rounded up in between; anything else is refused.
func FuzzTokenCount(f *testing.F) {
	for _, s := range []string{"12", "-3", "1.5", "1e2", "1E+30", "-0.0", "99999999999999999999", "99999999.5", `"7"`, "null", "[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		if !json.Valid(v) {
			return
		}
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		_ = d.Decode(&x)
		num, isNumber := x.(json.Number)
		if !isNumber {
			n := TokenCount(-42)
			err := json.Unmarshal(v, &n)
			if x == nil && (err != nil || n != -42) {
				t.Fatalf("null: %d, %v; want nothing changed", n, err)
			}
			if x != nil && err == nil {
				t.Fatalf("%s: read as %d, want refused", v, n)
			}
			return
		}
		var n TokenCount
		if err := json.Unmarshal(v, &n); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		got := Usage{Prompt: int64(n)}.Normalized().Prompt
		val, _ := strconv.ParseFloat(string(num), 64) // ±Inf when out of range
		var want int64
		switch {
		case val <= 0:
			want = 0
		case val >= MaxReportedTokens:
			want = MaxReportedTokens
		default:
			want = int64(math.Ceil(val))
		}
		if got != want {
			t.Fatalf("%s: normalised to %d, want %d", v, got, want)
		}
	})
}
