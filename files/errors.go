package files

import (
	"fmt"
	"net/http"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Client-visible errors of the Files API. docs/files.md lists every code.
// Codes the spec names (invalid_file_format, av_hit) keep its spelling and
// status; the others are Switchyard's.

func errInvalidFormat(msg string) *apierror.Error {
	return apierror.InvalidRequest("invalid_file_format", msg)
}

func errBadRequest(code, format string, args ...any) *apierror.Error {
	return apierror.InvalidRequest(code, fmt.Sprintf(format, args...))
}

func errTooLarge(limit int64) *apierror.Error {
	return apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest, "file_too_large",
		fmt.Sprintf("The file exceeds the maximum upload size of %d bytes.", limit))
}

func errAVHit() *apierror.Error {
	return apierror.New(http.StatusUnprocessableEntity, apierror.TypeInvalidRequest, "av_hit",
		"The file failed the malware scan and was not stored.")
}

func errAVUnavailable() *apierror.Error {
	e := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "av_unavailable",
		"The malware scanner is unavailable, so the file could not be accepted. Retry later.")
	e.RetryAfter = 30
	return e
}

func errMaxFiles(limit int) *apierror.Error {
	return apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "max_files_reached",
		fmt.Sprintf("The account already stores the maximum of %d files. Delete files before uploading more.", limit))
}

func errMaxStorage(limit int64) *apierror.Error {
	return apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "max_storage_reached",
		fmt.Sprintf("The file would take the account's stored bytes over the limit of %d bytes. Delete files before uploading more.", limit))
}

func errNotFound(id string) *apierror.Error {
	return apierror.NotFound(fmt.Sprintf("No such File object: %s", id))
}
