package caddymodules

import (
	"context"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/telemetry"
)

// The access log (Caddy's `log` directive, on in Caddyfile.example) gets
// a request's outcome as fields of its line: the request id, the key and
// account ids, the model asked for and the one that answered, the
// upstream, the tokens and price of its charge, and the error envelope's
// code. Never a key, a prompt or an answer: only ids, names the config
// gives and numbers. docs/operations.md lists the fields.

// logFields adds fields to the access log line of the request ctx
// belongs to, replacing any of the same name.
func logFields(ctx context.Context, fields ...zap.Field) {
	extra, ok := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if !ok {
		return
	}
	for _, f := range fields {
		extra.Set(f)
	}
}

// maxLoggedModel bounds the model string a client sent, as it goes to
// the log.
const maxLoggedModel = 128

// logOutcome adds what switchyard_auth knows when a request ends: the
// model asked for, the error code of the gateway's own envelope, and,
// without model pools (which log the upstream they chose), the one
// upstream of a request that went to it.
func logOutcome(r *http.Request, code, upstream string) {
	var fields []zap.Field
	model := requestedModel(r)
	if model != "" {
		fields = append(fields, zap.String("model", clip.Runes(model, maxLoggedModel)))
		if upstream != "" && (code == telemetry.CodeNone || strings.HasPrefix(code, "upstream_")) {
			fields = append(fields, zap.String("upstream", upstream))
		}
	}
	if code != "" && code != telemetry.CodeNone {
		fields = append(fields, zap.String("error_code", code))
	}
	logFields(r.Context(), fields...)
}

// logCharge adds a charged request's usage to its access log line.
func logCharge(ctx context.Context, rec storage.UsageRecord, cents int64) {
	fields := []zap.Field{
		zap.String("model_served", clip.Runes(rec.Model, maxLoggedModel)),
		zap.Int64("prompt_tokens", rec.PromptTokens),
		zap.Int64("completion_tokens", rec.CompletionTokens),
		zap.Int64("cost_cents", cents),
		zap.Bool("usage_estimated", rec.Estimated),
	}
	activityOf(ctx).Charged(rec, cents)
	if rec.Upstream != "" {
		fields = append(fields, zap.String("upstream", rec.Upstream))
	}
	logFields(ctx, fields...)
}
