package caddymodules

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// LimitsConfig overrides limits of the revision profile and tunes how they
// are enforced. Every zero field keeps the revision's value or the stated
// default.
type LimitsConfig struct {
	// Requests admitted per API key within RequestsPeriod. Default: the
	// revision's, A: 150 per rolling 60s, B: 60 per minute.
	Requests       int            `json:"requests,omitempty"`
	RequestsPeriod caddy.Duration `json:"requests_period,omitempty"`
	// Whether the request limit is a rolling window (no more than
	// Requests in any RequestsPeriod) rather than a rate with bursts up to
	// Requests. Default: rolling in both revisions.
	Rolling *bool `json:"rolling,omitempty"`

	// Concurrent streams per API key. Default: A 34, B 5.
	Streams int `json:"streams,omitempty"`

	// Size of one uploaded file, in bytes. Default: A 25 MiB, B 25 MB.
	MaxUploadBytes int64 `json:"max_upload_bytes,omitempty"`
	// Live files per account. Default: 100.
	MaxStoredFiles int `json:"max_stored_files,omitempty"`
	// Bytes stored per account. Default: A 500 MiB, B 500 MB.
	MaxStoredBytes int64 `json:"max_stored_bytes,omitempty"`
	// Decoded size of an inline image. Default: A 10 MiB, B 10 MB.
	MaxInlineImageBytes int64 `json:"max_inline_image_bytes,omitempty"`
	// Longest system message in characters; 0 shortens messages to fit
	// instead of refusing them. Default: A 0, B 2000.
	MaxSystemChars *int `json:"max_system_chars,omitempty"`
	// Most a single request may cost, in cents; 0 is no cap. Default: A
	// none, B 500.
	MaxChargeCents *int64 `json:"max_charge_cents,omitempty"`
	// Prices of the models named, by the model name a request gives, in
	// cents per million tokens, with up to two decimals (7.5 is $0.075).
	// Default: none, every model costs the spec's prices ($3 input, $10
	// output per million tokens).
	Prices map[string]policy.ModelPrice `json:"prices,omitempty"`

	// Largest JSON request body read to learn whether a request streams;
	// a larger one is refused with 413 request_too_large. Default: 32 MiB.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`

	// Memory that request bodies read into memory may take together, on
	// this node; past it, requests are refused with 503
	// server_overloaded until bodies in flight finish. Memory is taken as
	// bytes arrive, never for a length a request only declares; the
	// first 4 KiB of each body are not counted. Default: 256 MiB.
	BodyMemory int64 `json:"body_memory,omitempty"`

	// The most of BodyMemory the bodies of one account's requests may
	// hold at once; past it that account's requests are refused with 429
	// rate_limit_exceeded until its bodies in flight finish, and other
	// accounts keep the rest. Default: a quarter of BodyMemory, but no
	// less than MaxBodyBytes (nor more than BodyMemory).
	AccountBodyMemory int64 `json:"account_body_memory,omitempty"`

	// How long a request body read into memory may take to arrive whole,
	// from when its request was admitted; past it the request is refused
	// with 408 request_timeout and its memory given back at once. Uploads
	// stream to the blob store and are bounded by the server's read
	// timeouts instead. Default: 30s.
	BodyTimeout caddy.Duration `json:"body_timeout,omitempty"`

	// Bound on every Redis call of the limiter. Default: 150ms.
	RedisTimeout caddy.Duration `json:"redis_timeout,omitempty"`
	// What the request-rate check does when Redis fails: "fail_open"
	// (decide in process, with a warning and a counter) or "fail_closed"
	// (503). Default: fail_open.
	RatePolicy string `json:"rate_policy,omitempty"`
	// The same for concurrent-stream leases. Default: fail_open.
	StreamPolicy string `json:"stream_policy,omitempty"`
	// How long a stream's lease outlives its holder's last renewal: a node
	// killed without warning frees its streams' slots within this time.
	// Default: 30s.
	LeaseTTL caddy.Duration `json:"lease_ttl,omitempty"`
	// Number of gateway nodes. While Redis is down and limits fail open,
	// each node enforces 1/Nodes of each limit, so that together they admit
	// about what the shared limit would. Default: 1.
	Nodes int `json:"nodes,omitempty"`

	// Queue caps generations in flight towards the upstream. Default:
	// nil, no cap.
	Queue *QueueConfig `json:"queue,omitempty"`

	// Requests with a missing or invalid key allowed per client address
	// (per /64 for IPv6) in any rolling AuthFailuresPeriod; past it the
	// address gets 429 rate_limit_exceeded before any key lookup until
	// the oldest failure leaves the window. 0 turns the guard off.
	// Default: 60, as many as revision B admits per key.
	AuthFailures *int `json:"auth_failures,omitempty"`
	// The window of AuthFailures. Default: 1m.
	AuthFailuresPeriod caddy.Duration `json:"auth_failures_period,omitempty"`
}

// QueueConfig is the admission queue in front of the upstream.
type QueueConfig struct {
	// Generations in flight at once: per node without Redis, across all
	// nodes with it. Required.
	Slots int `json:"slots"`
	// Requests that may wait on one node; one more is refused with 503
	// server_overloaded. Default: 100.
	MaxWaiting int `json:"max_waiting,omitempty"`
	// How long a request may wait for a slot before it is refused with
	// 503 server_overloaded. Default: 30s.
	MaxWait caddy.Duration `json:"max_wait,omitempty"`
}

const (
	defaultMaxBodyBytes = 32 << 20
	defaultBodyMemory   = 256 << 20
	defaultBodyTimeout  = 30 * time.Second
)

// apply overrides the profile's limits with the configured ones.
func (c *LimitsConfig) apply(p *policy.Profile) {
	if c == nil {
		return
	}
	if c.Requests > 0 {
		p.RequestsPerPeriod = c.Requests
	}
	if c.RequestsPeriod > 0 {
		p.Period = time.Duration(c.RequestsPeriod)
	}
	if c.Rolling != nil {
		p.Rolling = *c.Rolling
	}
	if c.Streams > 0 {
		p.ConcurrentStreams = c.Streams
	}
	if c.MaxUploadBytes > 0 {
		p.MaxUploadBytes = c.MaxUploadBytes
	}
	if c.MaxStoredFiles > 0 {
		p.MaxStoredFiles = c.MaxStoredFiles
	}
	if c.MaxStoredBytes > 0 {
		p.MaxStoredBytes = c.MaxStoredBytes
	}
	if c.MaxInlineImageBytes > 0 {
		p.MaxInlineImage = c.MaxInlineImageBytes
	}
	if c.MaxSystemChars != nil {
		p.MaxSystemChars = *c.MaxSystemChars
	}
	if c.MaxChargeCents != nil {
		p.MaxChargeCents = *c.MaxChargeCents
	}
	if len(c.Prices) > 0 {
		p.ModelPrices = maps.Clone(c.Prices)
	}
}

func (c *LimitsConfig) bodyMemory() int64 {
	if c == nil || c.BodyMemory <= 0 {
		return defaultBodyMemory
	}
	return c.BodyMemory
}

func (c *LimitsConfig) accountBodyMemory() int64 {
	total := c.bodyMemory()
	if c != nil && c.AccountBodyMemory > 0 {
		return min(c.AccountBodyMemory, total)
	}
	return min(max(total/4, c.maxBodyBytes()), total)
}

func (c *LimitsConfig) bodyTimeout() time.Duration {
	if c == nil || c.BodyTimeout <= 0 {
		return defaultBodyTimeout
	}
	return time.Duration(c.BodyTimeout)
}

func (c *LimitsConfig) maxBodyBytes() int64 {
	if c == nil || c.MaxBodyBytes <= 0 {
		return defaultMaxBodyBytes
	}
	return c.MaxBodyBytes
}

func parsePolicy(s string) (limits.FailurePolicy, error) {
	switch s {
	case "", "fail_open":
		return limits.FailOpen, nil
	case "fail_closed":
		return limits.FailClosed, nil
	}
	return 0, fmt.Errorf("unknown Redis failure policy %q: want fail_open or fail_closed", s)
}

// validate checks what JSON decoding cannot.
func (c *LimitsConfig) validate() error {
	if c == nil {
		return nil
	}
	if _, err := parsePolicy(c.RatePolicy); err != nil {
		return err
	}
	if _, err := parsePolicy(c.StreamPolicy); err != nil {
		return err
	}
	if c.BodyMemory < 0 || c.AccountBodyMemory < 0 || c.MaxBodyBytes < 0 || c.BodyTimeout < 0 {
		return fmt.Errorf("max_body, body_memory, account_body_memory and body_timeout must not be negative")
	}
	if c.Queue != nil && c.Queue.Slots <= 0 {
		return fmt.Errorf("queue: slots must be positive")
	}
	for model, mp := range c.Prices {
		if model == "" || mp.InputPerMTok < 0 || mp.OutputPerMTok < 0 {
			return fmt.Errorf("prices: %q needs a model name and prices that are not negative", model)
		}
	}
	return nil
}

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
func unmarshalLimits(d *caddyfile.Dispenser) (*LimitsConfig, error) {
	c := new(LimitsConfig)
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
			c.RequestsPeriod = caddy.Duration(period)
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
				c.RedisTimeout = caddy.Duration(dur)
			case "lease_ttl":
				c.LeaseTTL = caddy.Duration(dur)
			case "body_timeout":
				c.BodyTimeout = caddy.Duration(dur)
			}
		case "rate_policy", "stream_policy":
			if len(args) != 1 {
				return nil, d.ArgErr()
			}
			_, err = parsePolicy(args[0])
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
			q := new(QueueConfig)
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
					q.MaxWait = caddy.Duration(dur)
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
