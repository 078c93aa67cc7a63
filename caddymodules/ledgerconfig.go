package caddymodules

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/billing"
)

// LedgerConfig tunes how charges reach the ledger. A request does not
// wait for its charge to be written: it hands its usage record to the
// store's ledger writer and its response completes at once; the writer
// commits the records of many requests in one transaction, and only then
// frees each request's hold on its account's balance (docs/billing.md,
// "Group commit").
type LedgerConfig struct {
	// How long the writer waits, after the first charge of a batch, for
	// more to share its transaction. Longer waits batch more charges per
	// commit when the load is moderate; the price is that each request's
	// hold (the money it keeps from the account's other requests) stays
	// that much longer, and that a node killed with -9 loses the charges
	// of about this long (the requests are then not charged at all). 0
	// commits at once what is queued; charges that finish during a
	// commit still share the next one. Default: 25ms.
	MaxDelay *caddy.Duration `json:"max_delay,omitempty"`

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

// writerConfig is the billing.WriterConfig c describes, defaults filled.
func (c *LedgerConfig) writerConfig() billing.WriterConfig {
	cfg := billing.WriterConfig{MaxDelay: billing.DefaultMaxDelay, RequestLogRetention: billing.DefaultRequestLogRetention}
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

func (c *LedgerConfig) validate() error {
	if c == nil {
		return nil
	}
	switch {
	case c.MaxDelay != nil && *c.MaxDelay < 0:
		return fmt.Errorf("ledger: max_delay must not be negative")
	case c.MaxBatch < 0, c.Queue < 0, c.RequestLogDays < 0:
		return fmt.Errorf("ledger: max_batch, queue and request_log_days must not be negative")
	}
	return nil
}

// unmarshalLedger parses the ledger block of the switchyard option:
//
//	ledger {
//		max_delay <duration>
//		max_batch <n>
//		queue     <n>
//		request_log_days <n>
//	}
func unmarshalLedger(d *caddyfile.Dispenser) (*LedgerConfig, error) {
	c := new(LedgerConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, 1, "ledger", map[string]optionReader{
		"max_delay":        c.unmarshalMaxDelay,
		"max_batch":        positiveIntOption(&c.MaxBatch),
		"queue":            positiveIntOption(&c.Queue),
		"request_log_days": positiveIntOption(&c.RequestLogDays),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// unmarshalMaxDelay reads max_delay's duration, which unlike the other
// durations may be 0.
func (c *LedgerConfig) unmarshalMaxDelay(d *caddyfile.Dispenser) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur < 0 {
		return d.Errf("max_delay: want a duration of 0 or more, not %q", v)
	}
	c.MaxDelay = ptr(caddy.Duration(dur))
	return nil
}
