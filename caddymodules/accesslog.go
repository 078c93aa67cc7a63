package caddymodules

import (
	"context"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

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
	line := lineOf(ctx, extra)
	for _, f := range fields {
		if !line.put(f) {
			extra.Set(f)
		}
	}
}

// logLineKeys are the fields a request's logLine keeps, in the order the
// line shows them.
var logLineKeys = [...]string{"request_id", "charge_id", "account_id", "key_id", "model", "model_served",
	"upstream", "upstream_attempts", "model_fallbacks", "prompt_tokens", "completion_tokens", "cost_cents",
	"usage_estimated", "error_code"}

// logLine is a request's own fields of its access log line. It goes into
// Caddy's ExtraLogFields once, as one inline field whose fields the
// encoder writes at the line's top level, and is filled in place after:
// ExtraLogFields.Set clears a sync.Map (a new root node each time) and
// may grow its slice on every call, which for a dozen fields a request
// was 7% of the bytes the gateway allocated (bench/results, the
// allocation profile). Like ExtraLogFields, it belongs to the request's
// goroutine.
type logLine struct {
	fields [len(logLineKeys)]zap.Field
	set    uint32 // bit i: fields[i] holds a value
}

// logLineVar is the request variable that holds its *logLine.
const logLineVar = "switchyard.log_line"

// lineOf is the logLine of ctx's request, put into extra on first use.
func lineOf(ctx context.Context, extra *caddyhttp.ExtraLogFields) *logLine {
	if l, ok := caddyhttp.GetVar(ctx, logLineVar).(*logLine); ok {
		return l
	}
	l := new(logLine)
	caddyhttp.SetVar(ctx, logLineVar, l)
	extra.Set(zap.Inline(l))
	return l
}

// put keeps f if its key is one of logLineKeys.
func (l *logLine) put(f zap.Field) bool {
	for i, k := range logLineKeys {
		if k == f.Key {
			l.fields[i] = f
			l.set |= 1 << i
			return true
		}
	}
	return false
}

// MarshalLogObject writes the fields that hold a value, as Caddy would
// have written each of them from ExtraLogFields.
func (l *logLine) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for i := range l.fields {
		if l.set&(1<<i) != 0 {
			l.fields[i].AddTo(enc)
		}
	}
	return nil
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
