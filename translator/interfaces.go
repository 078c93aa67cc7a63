package translator

import (
	"context"
	"time"
)

// FileOpener gives the model access to files uploaded through the Files
// API and referenced by input_file parts.
type FileOpener interface {
	// OpenFile returns what the model may see of an account's file: the
	// extracted text of a document, or the bytes of an image. A file the
	// account does not have is storage.ErrNotFound (or wraps it); an
	// *apierror.Error is passed to the client unchanged; any other error
	// fails the request with internal_error.
	OpenFile(ctx context.Context, accountID, fileID string) (Attachment, error)
}

// Attachment is the readable form of an uploaded file.
type Attachment struct {
	Name string // file name shown to the model
	MIME string // media type of the stored file
	// Text is the extracted text of a document. Empty for images and for
	// files whose text could not be extracted.
	Text string
	// Image holds the bytes of an image file (png, jpeg, webp, gif), sent
	// to the backend as an image part. Nil for other files.
	Image []byte
}

// UsageRecorder records and settles what a completion consumed.
type UsageRecorder interface {
	// RecordUsage is called once for every request that reached the
	// backend, including requests whose client left or whose backend
	// failed midway, with a context that outlives the request. It returns
	// the amount charged in cents, which is what cost_cents shows.
	RecordUsage(ctx context.Context, rec UsageRecord) (costCents int64, err error)
}

// UsageRecord is what one completion consumed.
type UsageRecord struct {
	AccountID string
	KeyID     string
	RequestID string
	EndUser   string // X-User-Id or body user
	SessionID string // X-Session-Id
	Model     string // the model string of the request
	Stream    bool

	// PromptTokens and CompletionTokens are summed over all rounds of the
	// tool loop: the billed totals (spec 2.5). PromptTokens includes the
	// service's own context; CompletionTokens includes reasoning and
	// tool-call arguments.
	PromptTokens     int64
	CompletionTokens int64
	// AnswerTokens is the share of CompletionTokens that was visible answer text.
	AnswerTokens int64
	// Estimated is true when the backend did not report usage for some
	// round (or the round broke off) and the counts were estimated from
	// the text at about four characters per token.
	Estimated bool

	Rounds    int // upstream calls made
	ToolCalls int // tool calls run
	Outcome   Outcome
	Started   time.Time
	Finished  time.Time
}

// Outcome is how a completion ended.
type Outcome string

const (
	OutcomeCompleted      Outcome = "completed"
	OutcomeClientGone     Outcome = "client_gone"     // the client disconnected
	OutcomeUpstreamFailed Outcome = "upstream_failed" // the backend failed or timed out
	OutcomeFailed         Outcome = "failed"          // another server-side failure
)

// Caller identifies who sent a request, as authentication found out.
type Caller struct {
	AccountID string
	KeyID     string
	// RequestID is the X-Request-Id of the request, for logs and records.
	RequestID string
}
