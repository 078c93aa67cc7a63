package caddymodules

import (
	"context"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/telemetry"
)

// The access log (Caddy's `log` directive, on in Caddyfile.example) gets
// a request's outcome as fields of its line: the request id, the key and
// account ids, the model asked for and the one that answered, the
// upstream, the tokens and price of its charge, and the error envelope's
// code. Never a key, a prompt or an answer: only ids, names the config
// gives and numbers. docs/operations.md lists the fields.

// logLineVar is the request variable that holds its *telemetry.LogLine.
const logLineVar = "switchyard.log_line"

// lineOf is the telemetry.LogLine of ctx's request, put into Caddy's
// extra log fields on first use (as one inline field, filled in place
// after: each ExtraLogFields.Set clears a sync.Map).
func lineOf(ctx context.Context, extra *caddyhttp.ExtraLogFields) *telemetry.LogLine {
	if l, ok := caddyhttp.GetVar(ctx, logLineVar).(*telemetry.LogLine); ok {
		return l
	}
	l := new(telemetry.LogLine)
	caddyhttp.SetVar(ctx, logLineVar, l)
	extra.Set(zap.Inline(l))
	return l
}

// lineFor is the access log line of ctx's request; outside a request
// Caddy logs, one that nothing writes.
func lineFor(ctx context.Context) *telemetry.LogLine {
	extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if !ok {
		return new(telemetry.LogLine)
	}
	return lineOf(ctx, extra)
}
