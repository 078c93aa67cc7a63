package caddymodules

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
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
