package billing

import (
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// StatusClientClosedRequest is the status Caddy's reverse proxy gives a
// request whose client left before the backend's answer began (nginx's
// 499): not an answer, so the backend may be working on the prompt.
const StatusClientClosedRequest = 499

// V1Exchange is what the meter saw of one /v1 request: the request, the
// final status of its answer and the usage read from it.
type V1Exchange struct {
	AccountID string
	KeyID     string
	// ChargeID is the server's own id of the request: the usage
	// record's key, never the caller's X-Request-Id, which a caller may
	// repeat.
	ChargeID string
	Request  V1Request
	// Status is the final status of the answer (1xx statuses do not
	// count); 0 when none was sent.
	Status int
	// Streamed is set when the answer was an event stream.
	Streamed bool
	// ClientGone is set when the client left before the answer ended.
	ClientGone        bool
	Usage             Usage
	Started, Finished time.Time
}

// V1Record returns the usage record of a /v1 exchange and whether it is
// to be charged. A successful answer is charged what its usage says, or
// an estimate when it said nothing; an answer the client left is charged
// what the backend generated until then, and the prompt; a request the
// backend refused or failed before answering is not charged.
func V1Record(x V1Exchange) (storage.UsageRecord, bool) {
	success := x.Status >= 200 && x.Status <= 299
	unanswered := x.ClientGone && (x.Status == 0 || x.Status == StatusClientClosedRequest)
	if !success && !unanswered {
		return storage.UsageRecord{}, false
	}
	u := x.Usage
	if !success {
		// The client left before an answer started: the backend has
		// worked on the prompt.
		u = Usage{Estimated: true}
	}
	if u.Estimated && u.Prompt == 0 {
		u.Prompt = x.Request.PromptEstimate()
	}
	u = u.Normalized() // the meter's are; an exchange built elsewhere may not be
	outcome := storage.OutcomeCompleted
	switch {
	case x.ClientGone:
		outcome = storage.OutcomeClientGone
	case u.Estimated && x.Streamed:
		outcome = storage.OutcomeUpstreamFailed // the stream broke off before its usage
	}
	return storage.UsageRecord{
		AccountID:        x.AccountID,
		KeyID:            x.KeyID,
		RequestID:        x.ChargeID,
		Model:            x.Request.Model,
		Stream:           x.Streamed,
		PromptTokens:     u.Prompt,
		CompletionTokens: u.Completion,
		Estimated:        u.Estimated,
		Rounds:           1,
		Outcome:          outcome,
		Started:          x.Started,
		Finished:         x.Finished,
	}, true
}
