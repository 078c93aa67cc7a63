package caddymodules

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// TestLineForKeepsOneLineARequest: a request's access log line is made
// once and found again by every handler; outside a request Caddy logs,
// the line is one nothing writes, so handlers need not check.
func TestLineForKeepsOneLineARequest(t *testing.T) {
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields))
	line := lineFor(ctx)
	if line == nil || lineFor(ctx) != line {
		t.Fatal("a request's handlers got different access log lines")
	}
	bare := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	if lineFor(bare) == nil {
		t.Fatal("no line outside a logged request")
	}
	lineFor(bare).Request("req-1", "chg-1") // must not panic
}

// A state that leaves its line to the encoders does so only while the
// request has no other extra log field, which Caddy keeps in a list it
// does not export: the list must be found in this version of Caddy, or
// every line would go through the extra fields again.
func TestNoExtraFieldsReadsCaddysList(t *testing.T) {
	if extraFieldsIndex < 0 {
		t.Fatal("caddyhttp.ExtraLogFields has no list of fields named fields")
	}
	extra := new(caddyhttp.ExtraLogFields)
	if !noExtraFields(extra) {
		t.Error("a new ExtraLogFields has fields")
	}
	extra.Add(zap.String("traceID", "t"))
	if noExtraFields(extra) {
		t.Error("an ExtraLogFields with a field has none")
	}
	if n := testing.AllocsPerRun(100, func() { noExtraFields(extra) }); n != 0 && !testenv.RaceEnabled {
		t.Errorf("noExtraFields allocates %v objects", n)
	}
}

// A state made for encoders that write the line puts nothing into the
// extra log fields and hands its line to them; one made while the
// request has an extra field already puts its line after it, as
// before, and hands the encoders nothing.
func TestStateLeavesItsLineToTheEncoders(t *testing.T) {
	extra := new(caddyhttp.ExtraLogFields)
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)
	s := stateFor(ctx, true)
	if !noExtraFields(extra) || !s.lineByEncoder {
		t.Error("the line went into the extra log fields")
	}
	if m := encoderLine(ctx); m != &s.line {
		t.Errorf("the encoders get %v, want the state's line", m)
	}

	extra = new(caddyhttp.ExtraLogFields)
	extra.Add(zap.String("traceID", "t"))
	ctx = context.WithValue(context.Background(), caddyhttp.VarsCtxKey, map[string]any{})
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, extra)
	if s := stateFor(ctx, true); s.lineByEncoder {
		t.Error("a line after another extra field was left to the encoders")
	}
	if m := encoderLine(ctx); m != nil {
		t.Errorf("the encoders get %v for a line in the extra fields", m)
	}
}
