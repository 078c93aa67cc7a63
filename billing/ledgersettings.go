package billing

import (
	"errors"
	"time"

	"github.com/switchyardhq/switchyard/internal/duration"
)

// LedgerSettings tune how charges reach the ledger. A request does not
// wait for its charge to be written: it hands its usage record to the
// store's ledger writer and its response completes at once; the writer
// commits the records of many requests in one transaction, and only then
// frees each request's hold on its account's balance (docs/billing.md,
// "Group commit").
type LedgerSettings struct {
	// How long the writer waits, after the first charge of a batch, for
	// more to share its transaction. Longer waits batch more charges per
	// commit when the load is moderate; the price is that each request's
	// hold (the money it keeps from the account's other requests) stays
	// that much longer, and that a node killed with -9 loses the charges
	// of about this long (the requests are then not charged at all). 0
	// commits at once what is queued; charges that finish during a
	// commit still share the next one. Default: 25ms.
	MaxDelay *duration.Duration `json:"max_delay,omitempty"`

	// Most charges one transaction writes. Default: 256.
	MaxBatch int `json:"max_batch,omitempty"`

	// How many charges may wait for the writer. Past it, finishing
	// requests wait for room (their responses are complete; their
	// handlers return later), so that a store that falls behind slows
	// the node down rather than losing charges. Taken when the store is
	// opened; a reload does not change it. Default: 4096.
	Queue int `json:"queue,omitempty"`

	// How many days the request log keeps an entry (docs/admin.md,
	// "Activity"); the writer deletes older ones every hour. Default: 30.
	RequestLogDays int `json:"request_log_days,omitempty"`
}

// WriterConfig is the WriterConfig c describes, defaults filled, without
// its store and logger; c may be nil.
func (c *LedgerSettings) WriterConfig() WriterConfig {
	cfg := WriterConfig{MaxDelay: DefaultMaxDelay, RequestLogRetention: DefaultRequestLogRetention}
	if c == nil {
		return cfg
	}
	if c.RequestLogDays > 0 {
		cfg.RequestLogRetention = time.Duration(c.RequestLogDays) * 24 * time.Hour
	}
	if c.MaxDelay != nil {
		cfg.MaxDelay = time.Duration(*c.MaxDelay)
	}
	cfg.MaxBatch, cfg.QueueSize = c.MaxBatch, c.Queue
	return cfg
}

// Validate checks what JSON decoding cannot; c may be nil.
func (c *LedgerSettings) Validate() error {
	if c == nil {
		return nil
	}
	switch {
	case c.MaxDelay != nil && *c.MaxDelay < 0:
		return errors.New("ledger: max_delay must not be negative")
	case c.MaxBatch < 0, c.Queue < 0, c.RequestLogDays < 0:
		return errors.New("ledger: max_batch, queue and request_log_days must not be negative")
	}
	return nil
}
