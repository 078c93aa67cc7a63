package files

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/storage/blob"
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

// EnvClamd is the environment variable read when Clamd is empty.
const EnvClamd = "SWITCHYARD_CLAMD_ADDR"

// Location resolves where bytes live, an s3:// URL or an absolute
// directory, with expand replacing placeholders; c may be nil. stateDir
// is where the node creates its state, whose files directory is the
// default; scratch says it is a scratch directory of a validation, which
// stands in for a configured directory too, so that validating creates
// none.
func (c *Settings) Location(expand func(string) string, stateDir string, scratch bool) (string, error) {
	var loc string
	if c != nil {
		loc = strings.TrimSpace(expand(c.Blobs))
	}
	if loc == "" || (scratch && !strings.HasPrefix(loc, "s3://")) {
		return filepath.Join(stateDir, "files"), nil
	}
	if strings.HasPrefix(loc, "s3://") {
		return loc, nil
	}
	if strings.Contains(loc, "://") {
		return "", fmt.Errorf("files: blobs %q: want a directory or an s3:// URL", loc)
	}
	return filepath.Abs(loc)
}

// Apply sets what c configures of the service: the scan policy, the
// purposes and the scanner, whose address lookup resolves (the value,
// else $SWITCHYARD_CLAMD_ADDR). c may be nil.
func (c *Settings) Apply(cfg *Config, lookup func(configured, env string) string) {
	if c == nil {
		c = new(Settings)
	}
	cfg.ScanFailOpen = c.ScanPolicy == "fail_open"
	cfg.Purposes = c.Purposes
	if addr := lookup(c.Clamd, EnvClamd); addr != "" {
		cfg.Scanner = &Clamd{Addr: addr}
	}
}

// CheckBlobs refuses a blobs value that Location or the bucket would
// refuse when the config loads: a URL other than s3://, or an s3:// URL
// with an unknown parameter or a bad endpoint. Opening a bucket asks the
// network nothing. Messages never quote the URL, which may carry
// credentials.
func CheckBlobs(loc string) error {
	switch {
	case strings.HasPrefix(loc, "s3://"):
		_, err := blob.OpenBucket(context.Background(), loc)
		return err
	case strings.Contains(loc, "://"):
		return errors.New("want a directory or an s3:// URL")
	}
	return nil
}

// CheckClamdAddr refuses a clamd address the scanner could never dial.
func CheckClamdAddr(addr string) error {
	_, _, err := parseClamdAddr(addr)
	return err
}

// CheckScanPolicy refuses a scan policy other than fail_closed and
// fail_open.
func CheckScanPolicy(p string) error {
	if p != "fail_closed" && p != "fail_open" {
		return fmt.Errorf("%q: want fail_closed or fail_open", p)
	}
	return nil
}
