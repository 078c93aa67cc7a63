package telemetry

import (
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/storage"
)

// The fields a LogLine keeps, in the order the line shows them.
const (
	lineRequestID = iota
	lineChargeID
	lineAccountID
	lineKeyID
	lineModel
	lineModelServed
	lineUpstream
	lineUpstreamAttempts
	lineModelFallbacks
	linePromptTokens
	lineCompletionTokens
	lineCostCents
	lineUsageEstimated
	lineErrorCode
	lineFields
)

// LogLine is a request's own fields of its access log line (the
// request and charge ids, account and key, models, upstream, tokens,
// cents, error code: docs/operations.md), kept in place and written by a
// logger as one inline field, at the line's top level: one field for the
// logger to hold instead of a dozen, each set anew. It belongs to the
// request's goroutine.
type LogLine struct {
	fields [lineFields]zap.Field
	set    uint32 // bit i: fields[i] holds a value
}

// put keeps f as the line's field i, replacing what it held.
func (l *LogLine) put(i int, f zap.Field) {
	l.fields[i] = f
	l.set |= 1 << i
}

// MarshalLogObject writes the fields that hold a value, as Caddy would
// have written each of them from ExtraLogFields.
func (l *LogLine) MarshalLogObject(enc zapcore.ObjectEncoder) error {
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

// Outcome keeps what is known when a request ends: the model asked for,
// the error code of the gateway's own envelope (code, CodeNone for
// none), and, for a request that went to it without model pools (which
// log the upstream they chose), its one upstream.
func (l *LogLine) Outcome(model, code, upstream string) {
	if model != "" {
		l.put(lineModel, zap.String("model", clip.Runes(model, maxLoggedModel)))
		if upstream != "" && (code == CodeNone || strings.HasPrefix(code, "upstream_")) {
			l.put(lineUpstream, zap.String("upstream", upstream))
		}
	}
	if code != "" && code != CodeNone {
		l.put(lineErrorCode, zap.String("error_code", code))
	}
}

// Charged keeps a charged request's usage: the model that answered, its
// tokens and cents, and the upstream that served it.
func (l *LogLine) Charged(rec storage.UsageRecord, cents int64) {
	l.put(lineModelServed, zap.String("model_served", clip.Runes(rec.Model, maxLoggedModel)))
	l.put(linePromptTokens, zap.Int64("prompt_tokens", rec.PromptTokens))
	l.put(lineCompletionTokens, zap.Int64("completion_tokens", rec.CompletionTokens))
	l.put(lineCostCents, zap.Int64("cost_cents", cents))
	l.put(lineUsageEstimated, zap.Bool("usage_estimated", rec.Estimated))
	if rec.Upstream != "" {
		l.put(lineUpstream, zap.String("upstream", rec.Upstream))
	}
}

// Request keeps the ids of the request and of its charge.
func (l *LogLine) Request(requestID, chargeID string) {
	l.put(lineRequestID, zap.String("request_id", requestID))
	l.put(lineChargeID, zap.String("charge_id", chargeID))
}

// Caller keeps the account and the key the request was made with.
func (l *LogLine) Caller(accountID, keyID string) {
	l.put(lineAccountID, zap.String("account_id", accountID))
	l.put(lineKeyID, zap.String("key_id", keyID))
}

// Served keeps the upstream and the model of a model pool that
// answered, after attempts tries, and, from 0 up, the fallback models
// tried before it (fallbacks < 0: not counted here).
func (l *LogLine) Served(upstream, model string, attempts, fallbacks int) {
	l.put(lineUpstream, zap.String("upstream", upstream))
	l.put(lineModelServed, zap.String("model_served", model))
	l.put(lineUpstreamAttempts, zap.Int("upstream_attempts", attempts))
	if fallbacks >= 0 {
		l.put(lineModelFallbacks, zap.Int("model_fallbacks", fallbacks))
	}
}
