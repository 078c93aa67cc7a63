package telemetry

import (
	"strings"

	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/storage"
)

// The fields a LogLine keeps, in the order the line shows them (bits of
// LogLine.set).
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
// logger to hold instead of a dozen, each set anew. It keeps the values
// alone, the names being the line's: every request's state holds one
// for as long as the request lasts, a stream's included, and fourteen
// zap.Fields were 900 bytes of it. It belongs to the request's goroutine.
type LogLine struct {
	requestID, chargeID, accountID, keyID   string
	model, modelServed, upstream, errorCode string

	attempts, fallbacks                  int64
	promptTokens, completionTokens, cost int64
	estimated                            bool

	set uint16 // bit i: the line's field i holds a value
}

// has marks the line's field i as holding a value.
func (l *LogLine) has(i int) { l.set |= 1 << i }

// MarshalLogObject writes the fields that hold a value, in the line's
// order, as Caddy would have written each of them from ExtraLogFields.
func (l *LogLine) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for i := range lineFields {
		if l.set&(1<<i) == 0 {
			continue
		}
		switch i {
		case lineRequestID:
			enc.AddString("request_id", l.requestID)
		case lineChargeID:
			enc.AddString("charge_id", l.chargeID)
		case lineAccountID:
			enc.AddString("account_id", l.accountID)
		case lineKeyID:
			enc.AddString("key_id", l.keyID)
		case lineModel:
			enc.AddString("model", l.model)
		case lineModelServed:
			enc.AddString("model_served", l.modelServed)
		case lineUpstream:
			enc.AddString("upstream", l.upstream)
		case lineUpstreamAttempts:
			enc.AddInt64("upstream_attempts", l.attempts)
		case lineModelFallbacks:
			enc.AddInt64("model_fallbacks", l.fallbacks)
		case linePromptTokens:
			enc.AddInt64("prompt_tokens", l.promptTokens)
		case lineCompletionTokens:
			enc.AddInt64("completion_tokens", l.completionTokens)
		case lineCostCents:
			enc.AddInt64("cost_cents", l.cost)
		case lineUsageEstimated:
			enc.AddBool("usage_estimated", l.estimated)
		case lineErrorCode:
			enc.AddString("error_code", l.errorCode)
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
		l.model = clip.Runes(model, maxLoggedModel)
		l.has(lineModel)
		if upstream != "" && (code == CodeNone || strings.HasPrefix(code, "upstream_")) {
			l.upstream = upstream
			l.has(lineUpstream)
		}
	}
	if code != "" && code != CodeNone {
		l.errorCode = code
		l.has(lineErrorCode)
	}
}

// Charged keeps a charged request's usage: the model that answered, its
// tokens and cents, and the upstream that served it.
func (l *LogLine) Charged(rec storage.UsageRecord, cents int64) {
	l.modelServed = clip.Runes(rec.Model, maxLoggedModel)
	l.promptTokens, l.completionTokens, l.cost, l.estimated = rec.PromptTokens, rec.CompletionTokens, cents, rec.Estimated
	l.set |= 1<<lineModelServed | 1<<linePromptTokens | 1<<lineCompletionTokens | 1<<lineCostCents | 1<<lineUsageEstimated
	if rec.Upstream != "" {
		l.upstream = rec.Upstream
		l.has(lineUpstream)
	}
}

// Request keeps the ids of the request and of its charge.
func (l *LogLine) Request(requestID, chargeID string) {
	l.requestID, l.chargeID = requestID, chargeID
	l.set |= 1<<lineRequestID | 1<<lineChargeID
}

// Caller keeps the account and the key the request was made with.
func (l *LogLine) Caller(accountID, keyID string) {
	l.accountID, l.keyID = accountID, keyID
	l.set |= 1<<lineAccountID | 1<<lineKeyID
}

// Served keeps the upstream and the model of a model pool that
// answered, after attempts tries, and, from 0 up, the fallback models
// tried before it (fallbacks < 0: not counted here).
func (l *LogLine) Served(upstream, model string, attempts, fallbacks int) {
	l.upstream, l.modelServed, l.attempts = upstream, model, int64(attempts)
	l.set |= 1<<lineUpstream | 1<<lineModelServed | 1<<lineUpstreamAttempts
	if fallbacks >= 0 {
		l.fallbacks = int64(fallbacks)
		l.has(lineModelFallbacks)
	}
}
