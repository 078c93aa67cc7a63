package files

import (
	"fmt"

	"github.com/switchyardhq/switchyard/internal/duration"
)

// Settings configure the Files API: where bytes live, malware
// scanning and the cleanup of expired files.
type Settings struct {
	// Where file bytes are kept: a directory path, or an s3:// bucket URL
	// (docs/files.md lists its parameters). Default: the files directory
	// inside data_dir.
	Blobs string `json:"blobs,omitempty"`

	// clamd address (tcp://host:port or unix:///path) that every upload
	// is streamed through before it is kept. Default:
	// $SWITCHYARD_CLAMD_ADDR, else no scanning.
	Clamd string `json:"clamd,omitempty"`

	// What an upload does when clamd cannot give a verdict: "fail_closed"
	// refuses it with 503 av_unavailable, "fail_open" keeps it, flagged
	// and logged. Default: fail_closed.
	ScanPolicy string `json:"scan_policy,omitempty"`

	// Time between sweeps that remove expired files' bytes and rows.
	// Several nodes may sweep at once. Default: 10m.
	JanitorInterval duration.Duration `json:"janitor_interval,omitempty"`

	// Upload purposes accepted. Default: assistants, user_data, vision.
	Purposes []string `json:"purposes,omitempty"`
}

// Validate checks what JSON decoding cannot; c may be nil.
func (c *Settings) Validate() error {
	if c == nil {
		return nil
	}
	switch c.ScanPolicy {
	case "", "fail_closed", "fail_open":
		return nil
	}
	return fmt.Errorf("files: unknown scan_policy %q: want fail_closed or fail_open", c.ScanPolicy)
}
