package files

import "context"

// Scanner checks uploads for malware while they stream to storage.
// Clamd is the implementation; tests use fakes.
type Scanner interface {
	// NewScan starts scanning one file. An error means the scanner is
	// unavailable.
	NewScan(ctx context.Context) (Scan, error)
}

// Scan receives one file's content through Write and then gives its
// verdict. It is used by one goroutine.
type Scan interface {
	// Write sends content to the scanner. It always reports len(p), nil,
	// so that a tee into it never stops the upload; a failure to deliver
	// the content is reported by Verdict.
	Write(p []byte) (int, error)
	// Verdict ends the content and waits for the scanner's answer. An
	// error means no verdict was reached (scanner unreachable, too slow,
	// content over its size limit, unreadable answer).
	Verdict() (Verdict, error)
	// Close releases the scan. It aborts a scan whose verdict was not
	// asked for, and is safe to call after Verdict.
	Close() error
}

// Verdict is a scanner's answer.
type Verdict struct {
	Infected  bool
	Signature string // name of the matched signature when Infected
}
