package files

import (
	"errors"
	"fmt"
	"github.com/switchyardhq/switchyard/internal/humantime"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// Kinds of the Service's errors. Every error the Service returns wraps
// one of them, or is the context's error when the caller has gone; test
// with errors.Is. Only the HTTP handler (http.go) turns them into the
// client-visible codes of docs/files.md.
var (
	// ErrNotFound: no such file for this account (never stored,
	// another account's, deleted or expired).
	ErrNotFound = storage.ErrNotFound
	// ErrInvalidRequest: the request or its form is unusable; Error.Code
	// says which check failed.
	ErrInvalidRequest = errors.New("files: invalid request")
	// ErrInvalidFormat: the content is not an accepted format, or does
	// not match its filename's extension.
	ErrInvalidFormat = errors.New("files: invalid file format")
	// ErrTooLarge: the file is over the per-file limit (Error.Limit).
	ErrTooLarge = errors.New("files: file too large")
	// ErrAVHit: the malware scanner found something; nothing was stored.
	ErrAVHit = errors.New("files: refused by the malware scan")
	// ErrScannerUnavailable: the malware scanner gave no verdict and the
	// service fails closed.
	ErrScannerUnavailable = errors.New("files: malware scanner unavailable")
	// ErrTooManyFiles and ErrTooManyBytes: the account's quota is full
	// (Error.Limit is the quota).
	ErrTooManyFiles = storage.ErrTooManyFiles
	ErrTooManyBytes = storage.ErrTooManyBytes
	// ErrUploadTimeout: the upload took longer than Config.UploadTimeout.
	ErrUploadTimeout = errors.New("files: upload timed out")
	// ErrInternal: a store failed. The cause has been logged; the error
	// does not carry it.
	ErrInternal = errors.New("files: internal error")
)

// Error is an error of the Service with the details a client message
// needs. Kind is one of the Err values above; the zero value of every
// other field means "not applicable".
type Error struct {
	Kind error
	// Code is the check that failed, for ErrInvalidRequest, as
	// docs/files.md names it ("invalid_purpose", "missing_file", ...).
	Code string
	// Detail is a sentence that may be shown to the client
	// (ErrInvalidRequest, ErrInvalidFormat, ErrUploadTimeout).
	Detail string
	// FileID is the id asked for (ErrNotFound).
	FileID string
	// Limit is the limit that was reached: bytes for ErrTooLarge and
	// ErrTooManyBytes, files for ErrTooManyFiles.
	Limit int64
}

func (e *Error) Error() string {
	msg := e.Kind.Error()
	switch {
	case e.Detail != "":
		msg += ": " + e.Detail
	case e.FileID != "":
		msg += ": " + e.FileID
	case e.Limit > 0:
		msg += fmt.Sprintf(" (limit %d)", e.Limit)
	}
	return msg
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

func errBadRequest(code, format string, args ...any) *Error {
	return &Error{Kind: ErrInvalidRequest, Code: code, Detail: fmt.Sprintf(format, args...)}
}

func errInvalidFormat(detail string) *Error {
	return &Error{Kind: ErrInvalidFormat, Detail: detail}
}

func errNotFound(id string) *Error { return &Error{Kind: ErrNotFound, FileID: id} }

func errTooLarge(limit int64) *Error { return &Error{Kind: ErrTooLarge, Limit: limit} }

func errMaxFiles(limit int) *Error { return &Error{Kind: ErrTooManyFiles, Limit: int64(limit)} }

func errMaxStorage(limit int64) *Error { return &Error{Kind: ErrTooManyBytes, Limit: limit} }

func errUploadTimeout(d time.Duration) *Error {
	return &Error{Kind: ErrUploadTimeout, Detail: fmt.Sprintf("The upload took longer than %s.", humantime.Duration(d))}
}
