package caddymodules

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestLogLineWritesItsFieldsAtTheTop: a request's log fields, added in
// several calls and some replaced, reach the line as top-level fields
// with their last values, and a field the line does not keep still
// reaches Caddy's extra fields.
func TestLogLineWritesItsFieldsAtTheTop(t *testing.T) {
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	extra := new(caddyhttp.ExtraLogFields)
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)

	logFields(ctx, zap.String("request_id", "req-1"), zap.String("charge_id", "chg-1"))
	logFields(ctx, zap.String("upstream", "10.0.0.5:8000"), zap.Int("upstream_attempts", 1))
	logFields(ctx, zap.String("upstream", "10.0.0.6:8000"), zap.Int("upstream_attempts", 2), zap.Int("model_fallbacks", 1),
		zap.Int64("cost_cents", 3), zap.Bool("usage_estimated", false))
	line := lineOf(ctx, extra)
	if again := lineOf(ctx, extra); again != line {
		t.Fatal("a second logLine for one request")
	}
	if line.put(zap.String("not_a_line_field", "x")) {
		t.Error("the line kept a field it does not list")
	}

	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg"})
	buf, err := enc.EncodeEntry(zapcore.Entry{Message: "handled request"}, []zapcore.Field{zap.Inline(line)})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf)
	}
	want := map[string]any{"msg": "handled request", "request_id": "req-1", "charge_id": "chg-1",
		"upstream": "10.0.0.6:8000", "upstream_attempts": 2.0, "model_fallbacks": 1.0, "cost_cents": 3.0, "usage_estimated": false}
	if len(got) != len(want) {
		t.Errorf("line %s, want the fields %v", buf, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, got[k], v, buf)
		}
	}
}
