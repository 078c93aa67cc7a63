package caddymodules

import (
	"fmt"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// unmarshalLimits parses the limits block of the switchyard option:
//
//	limits {
//		requests      <n> <period> [rolling|rate]
//		streams       <n>
//		upload_size   <size>
//		stored_files  <n>
//		stored_bytes  <size>
//		inline_image  <size>
//		system_chars  <n>
//		max_charge    <usd>|none
//		price         <model> <input usd per 1M tokens> <output usd per 1M tokens>  (up to four decimals)
//		max_body      <size>
//		body_memory   <size>
//		account_body_memory <size>
//		body_timeout  <duration>
//		redis_timeout <duration>
//		rate_policy   fail_open|fail_closed
//		stream_policy fail_open|fail_closed
//		lease_ttl     <duration>
//		nodes         <n>
//		auth_failures <n> [<period>] | off
//		queue <slots> {
//			max_waiting <n>
//			max_wait    <duration>
//		}
//	}
//
// Sizes take units (25MB, 25MiB). price may be given once per model;
// models without one cost the spec's prices.
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
		case "requests":
			if len(args) < 2 || len(args) > 3 {
				return nil, d.ArgErr()
			}
			if c.Requests, err = positiveInt(args[0]); err != nil {
				break
			}
			var period time.Duration
			if period, err = caddy.ParseDuration(args[1]); err != nil {
				break
			}
			c.RequestsPeriod = duration.Duration(period)
			if len(args) == 3 {
				switch args[2] {
				case "rolling":
					c.Rolling = ptr(true)
				case "rate":
					c.Rolling = ptr(false)
				default:
					err = fmt.Errorf("want rolling or rate, not %q", args[2])
				}
			}
		case "streams", "stored_files", "nodes", "system_chars":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			var n int
			if opt == "system_chars" {
				n, err = strconv.Atoi(args[0])
				if err == nil && n < 0 {
					err = fmt.Errorf("must not be negative")
				}
			} else {
				n, err = positiveInt(args[0])
			}
			switch opt {
			case "streams":
				c.Streams = n
			case "stored_files":
				c.MaxStoredFiles = n
			case "nodes":
				c.Nodes = n
			case "system_chars":
				c.MaxSystemChars = &n
			}
		case "upload_size", "stored_bytes", "inline_image", "max_body", "body_memory", "account_body_memory":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			var size uint64
			if size, err = humanize.ParseBytes(args[0]); err != nil {
				err = fmt.Errorf("want a size such as 25MiB or 500MB, not %q", args[0])
			} else if size == 0 {
				err = fmt.Errorf("must be positive")
			}
			switch opt {
			case "upload_size":
				c.MaxUploadBytes = int64(size)
			case "stored_bytes":
				c.MaxStoredBytes = int64(size)
			case "inline_image":
				c.MaxInlineImageBytes = int64(size)
			case "max_body":
				c.MaxBodyBytes = int64(size)
			case "body_memory":
				c.BodyMemory = int64(size)
			case "account_body_memory":
				c.AccountBodyMemory = int64(size)
			}
		case "max_charge":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			var cents int64
			if args[0] != "none" {
				cents, err = billing.ParseUSD(args[0])
			}
			c.MaxChargeCents = &cents
		case "price":
			if len(args) != 3 {
				return nil, d.ArgErr()
			}
			if _, dup := c.Prices[args[0]]; dup {
				return nil, d.Errf("price: model %q priced twice", args[0])
			}
			var mp policy.ModelPrice
			if mp, err = parsePrice(args[1], args[2]); err != nil {
				break
			}
			if c.Prices == nil {
				c.Prices = make(map[string]policy.ModelPrice)
			}
			c.Prices[args[0]] = mp
		case "redis_timeout", "lease_ttl", "body_timeout":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			var dur time.Duration
			if dur, err = caddy.ParseDuration(args[0]); err == nil && dur <= 0 {
				err = fmt.Errorf("must be positive")
			}
			switch opt {
			case "redis_timeout":
				c.RedisTimeout = duration.Duration(dur)
			case "lease_ttl":
				c.LeaseTTL = duration.Duration(dur)
			case "body_timeout":
				c.BodyTimeout = duration.Duration(dur)
			}
		case "rate_policy", "stream_policy":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			_, err = limits.ParseFailurePolicy(args[0])
			if opt == "rate_policy" {
				c.RatePolicy = args[0]
			} else {
				c.StreamPolicy = args[0]
			}
		case "auth_failures":
			err = parseAuthFailures(c, args)
		case "queue":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			q := new(limits.QueueSettings)
			if q.Slots, err = positiveInt(args[0]); err != nil {
				break
			}
			for d.NextBlock(2) {
				sub := d.Val()
				subArgs := d.RemainingArgs()
				if len(subArgs) != 1 {
					return nil, d.ArgErr()
				}
				switch sub {
				case "max_waiting":
					q.MaxWaiting, err = positiveInt(subArgs[0])
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
			c.Queue = q
		default:
			return nil, d.Errf("unrecognized limits option %q", opt)
		}
		if err != nil {
			return nil, d.Errf("%s: %v", opt, err)
		}
	}
	return c, nil
}

func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive whole number, not %q", s)
	}
	return n, nil
}

// parsePrice reads a model's price from its two arguments, dollars per
// million input tokens and per million output tokens, with up to four
// decimals each (0.075 is 7.5 cents).
func parsePrice(input, output string) (policy.ModelPrice, error) {
	var mp policy.ModelPrice
	var err error
	if mp.InputPerMTok, err = policy.ParseUSDPerMTok(input); err != nil {
		return mp, err
	}
	mp.OutputPerMTok, err = policy.ParseUSDPerMTok(output)
	return mp, err
}

func ptr[T any](v T) *T { return &v }
