package caddymodules

import (
	"errors"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// unmarshalLimits parses the limits block of the switchyard option:
//
//	limits {
//		<option> <args>...   (limits.Config.SetOption lists them)
//		max_charge    <usd>|none
//		queue <slots> {
//			max_waiting <n>
//			max_wait    <duration>
//		}
//	}
//
// Models without a price cost the spec's prices.
func unmarshalLimits(d *caddyfile.Dispenser) (*limits.Config, error) {
	c := new(limits.Config)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for d.NextBlock(1) {
		opt := d.Val()
		args := d.RemainingArgs()
		var err error
		switch opt {
		case "max_charge":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			var cents int64
			if args[0] != "none" {
				cents, err = billing.ParseUSD(args[0])
			}
			c.MaxChargeCents = &cents
		case "queue":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			if c.Queue, err = unmarshalQueue(d, args[0]); err != nil {
				return nil, err
			}
		default:
			err = c.SetOption(opt, args)
			switch {
			case errors.Is(err, limits.ErrUnknownOption):
				return nil, d.Errf("unrecognized limits option %q", opt)
			case errors.Is(err, limits.ErrArgCount):
				return nil, d.ArgErr()
			}
		}
		if err != nil {
			return nil, d.Errf("%s: %v", opt, err)
		}
	}
	return c, nil
}

// unmarshalQueue reads the queue option's block, its slots read from
// slots.
func unmarshalQueue(d *caddyfile.Dispenser, slots string) (*limits.QueueSettings, error) {
	q := new(limits.QueueSettings)
	var err error
	if q.Slots, err = limits.PositiveInt(slots); err != nil {
		return nil, d.Errf("queue: %v", err)
	}
	for d.NextBlock(2) {
		sub := d.Val()
		subArgs := d.RemainingArgs()
		if len(subArgs) != 1 {
			return nil, d.ArgErr()
		}
		switch sub {
		case "max_waiting":
			q.MaxWaiting, err = limits.PositiveInt(subArgs[0])
		case "max_wait":
			var dur time.Duration
			dur, err = caddy.ParseDuration(subArgs[0])
			q.MaxWait = duration.Duration(dur)
		default:
			return nil, d.Errf("unrecognized queue option %q", sub)
		}
		if err != nil {
			return nil, d.Errf("queue %s: %v", sub, err)
		}
	}
	return q, nil
}

func positiveInt(s string) (int, error) { return limits.PositiveInt(s) }

func ptr[T any](v T) *T { return &v }
