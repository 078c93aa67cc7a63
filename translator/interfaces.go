package translator

import (
	"context"

	"github.com/switchyardhq/switchyard/storage"
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
	// the amount charged in cents, which is what cost_cents shows. It may
	// return before the charge is committed: the response does not wait
	// for the ledger.
	RecordUsage(ctx context.Context, rec storage.UsageRecord) (costCents int64, err error)
}

// Caller identifies who sent a request, as authentication found out.
type Caller struct {
	AccountID string
	KeyID     string
	// RequestID is the X-Request-Id of the request, for logs.
	RequestID string
	// ChargeID is the server's own id of the request, the key of its
	// usage record and charge. It must never come from the client, who
	// could repeat it.
	ChargeID string
}
