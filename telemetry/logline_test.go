package telemetry

import (
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/storage"
)

// encodeLine is l as a JSON logger writes it, as one inline field.
func encodeLine(t *testing.T, l *LogLine) map[string]any {
	t.Helper()
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg"})
	buf, err := enc.EncodeEntry(zapcore.Entry{Message: "handled request"}, []zapcore.Field{zap.Inline(l)})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf)
	}
	return got
}

// TestLogLineWritesItsFieldsAtTheTop: the fields kept in several calls,
// some replaced, reach the line at its top level with their last values,
// and nothing else does.
func TestLogLineWritesItsFieldsAtTheTop(t *testing.T) {
	var l LogLine
	l.Request("req-1", "chg-1")
	l.Caller("acct_1", "key_1")
	l.Served("10.0.0.5:8000", "small", 1, -1)
	l.Served("10.0.0.6:8000", "small", 2, 1)
	l.Charged(storage.UsageRecord{Model: "small", PromptTokens: 9, CompletionTokens: 12, Estimated: true}, 3)
	l.Outcome(strings.Repeat("m", 200), "upstream_timeout", "10.0.0.7:8000")
	got := encodeLine(t, &l)
	want := map[string]any{"msg": "handled request", "request_id": "req-1", "charge_id": "chg-1",
		"account_id": "acct_1", "key_id": "key_1", "model": strings.Repeat("m", 128), "model_served": "small",
		"upstream": "10.0.0.7:8000", "upstream_attempts": 2.0, "model_fallbacks": 1.0,
		"prompt_tokens": 9.0, "completion_tokens": 12.0, "cost_cents": 3.0, "usage_estimated": true,
		"error_code": "upstream_timeout"}
	if len(got) != len(want) {
		t.Errorf("line %v, want the fields %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// TestLogLineOutcome: the error code is written only for the gateway's
// own envelopes, and the upstream only for a request that reached it.
func TestLogLineOutcome(t *testing.T) {
	for _, tt := range []struct {
		model, code, upstream string
		want                  map[string]any
	}{
		{"small", CodeNone, "10.0.0.5:8000", map[string]any{"model": "small", "upstream": "10.0.0.5:8000"}},
		{"small", "rate_limit_exceeded", "10.0.0.5:8000", map[string]any{"model": "small", "error_code": "rate_limit_exceeded"}},
		{"", "invalid_api_key", "", map[string]any{"error_code": "invalid_api_key"}},
		{"", CodeNone, "10.0.0.5:8000", map[string]any{}},
	} {
		var l LogLine
		l.Outcome(tt.model, tt.code, tt.upstream)
		got := encodeLine(t, &l)
		delete(got, "msg")
		if len(got) != len(tt.want) {
			t.Errorf("Outcome(%q, %q, %q) = %v, want %v", tt.model, tt.code, tt.upstream, got, tt.want)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("Outcome(%q, %q, %q): %s = %v, want %v", tt.model, tt.code, tt.upstream, k, got[k], v)
			}
		}
	}
}

// TestLogLineWritesInTheLinesOrder: whatever order the fields were kept
// in, the line writes them in one order, so that lines read alike.
func TestLogLineWritesInTheLinesOrder(t *testing.T) {
	var l LogLine
	l.Outcome("big", "upstream_timeout", "10.0.0.7:8000")
	l.Charged(storage.UsageRecord{Model: "small", PromptTokens: 9, CompletionTokens: 12}, 3)
	l.Served("10.0.0.6:8000", "small", 2, 1)
	l.Caller("acct_1", "key_1")
	l.Request("req-1", "chg-1")
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{})
	buf, err := enc.EncodeEntry(zapcore.Entry{}, []zapcore.Field{zap.Inline(&l)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"request_id":"req-1","charge_id":"chg-1","account_id":"acct_1","key_id":"key_1","model":"big",` +
		`"model_served":"small","upstream":"10.0.0.6:8000","upstream_attempts":2,"model_fallbacks":1,` +
		`"prompt_tokens":9,"completion_tokens":12,"cost_cents":3,"usage_estimated":false,"error_code":"upstream_timeout"}`
	if got := strings.TrimSpace(buf.String()); got != want {
		t.Errorf("line\n%s\nwant\n%s", got, want)
	}
}
