package files

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
)

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		message    string
		retryAfter int
	}{
		{name: "not found", err: errNotFound("file-x"), status: 404, code: "not_found", message: "No such File object: file-x"},
		{name: "bad request", err: errBadRequest("invalid_order", "order must be asc or desc."), status: 400, code: "invalid_order", message: "order must be asc or desc."},
		{name: "format", err: errInvalidFormat("The file is empty."), status: 400, code: "invalid_file_format", message: "The file is empty."},
		{name: "upload timeout", err: errUploadTimeout(DefaultUploadTimeout), status: 400, code: "upload_timeout", message: "The upload took longer than 1 hour."},
		{name: "too large", err: errTooLarge(512), status: 413, code: "file_too_large", message: "The file exceeds the maximum upload size of 512 bytes."},
		{name: "av hit", err: ErrAVHit, status: 422, code: "av_hit", message: "The file failed the malware scan and was not stored."},
		{name: "max files", err: errMaxFiles(3), status: 409, code: "max_files_reached", message: "The account already stores the maximum of 3 files. Delete files before uploading more."},
		{name: "max bytes", err: errMaxStorage(10), status: 409, code: "max_storage_reached", message: "The file would take the account's stored bytes over the limit of 10 bytes. Delete files before uploading more."},
		{name: "scanner down", err: ErrScannerUnavailable, status: 503, code: "av_unavailable", retryAfter: 30,
			message: "The malware scanner is unavailable, so the file could not be accepted. Retry later."},
		{name: "internal", err: fmt.Errorf("%w: listing files", ErrInternal), status: 500, code: "internal_error"},
		{name: "internal wins over a wrapped kind", err: fmt.Errorf("%w: %w", ErrInternal, storage.ErrNotFound), status: 500, code: "internal_error"},
		{name: "context", err: context.Canceled, status: 500, code: "internal_error"},
		{name: "unknown", err: errors.New("boom"), status: 500, code: "internal_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := envelope(tt.err)
			if e.Status != tt.status || e.Code != tt.code || e.RetryAfter != tt.retryAfter {
				t.Fatalf("envelope(%v) = %d %s retry %d, want %d %s retry %d", tt.err, e.Status, e.Code, e.RetryAfter, tt.status, tt.code, tt.retryAfter)
			}
			if tt.message != "" && e.Message != tt.message {
				t.Fatalf("message = %q, want %q", e.Message, tt.message)
			}
			if tt.status == http.StatusInternalServerError && e.Message == "boom" {
				t.Fatalf("an internal error's text reached the client")
			}
		})
	}
}
