package caddymodules

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/duration"
)

// unmarshalLedger parses the ledger block of the switchyard option:
//
//	ledger {
//		max_delay <duration>
//		max_batch <n>
//		queue     <n>
//		request_log_days <n>
//	}
func unmarshalLedger(d *caddyfile.Dispenser) (*billing.LedgerSettings, error) {
	c := new(billing.LedgerSettings)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, 1, "ledger", map[string]optionReader{
		"max_delay":        maxDelayOption(&c.MaxDelay),
		"max_batch":        positiveIntOption(&c.MaxBatch),
		"queue":            positiveIntOption(&c.Queue),
		"request_log_days": positiveIntOption(&c.RequestLogDays),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// maxDelayOption reads max_delay's duration, which unlike the other
// durations may be 0.
func maxDelayOption(dst **duration.Duration) optionReader {
	return func(d *caddyfile.Dispenser) error {
		var v string
		if err := oneArg(d, &v); err != nil {
			return err
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur < 0 {
			return d.Errf("max_delay: want a duration of 0 or more, not %q", v)
		}
		*dst = ptr(duration.Duration(dur))
		return nil
	}
}
