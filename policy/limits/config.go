package limits

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/body"
	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy"
)

// Config overrides limits of the revision profile and tunes how they
// are enforced. Every zero field keeps the revision's value or the stated
// default.
type Config struct {
	// Requests admitted per API key within RequestsPeriod. Default: the
	// revision's, A: 150 per rolling 60s, B: 60 per minute.
	Requests       int               `json:"requests,omitempty"`
	RequestsPeriod duration.Duration `json:"requests_period,omitempty"`
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
	BodyTimeout duration.Duration `json:"body_timeout,omitempty"`

	// Bound on every Redis call of the limiter. Default: 150ms.
	RedisTimeout duration.Duration `json:"redis_timeout,omitempty"`
	// What the request-rate check does when Redis fails: "fail_open"
	// (decide in process, with a warning and a counter) or "fail_closed"
	// (503). Default: fail_open.
	RatePolicy string `json:"rate_policy,omitempty"`
	// The same for concurrent-stream leases. Default: fail_open.
	StreamPolicy string `json:"stream_policy,omitempty"`
	// How long a stream's lease outlives its holder's last renewal: a node
	// killed without warning frees its streams' slots within this time,
	// and with Redis up to a second more (expiries are kept in whole
	// seconds, rounded up). Default: 30s.
	LeaseTTL duration.Duration `json:"lease_ttl,omitempty"`
	// Number of gateway nodes. While Redis is down and limits fail open,
	// each node enforces 1/Nodes of each limit, so that together they admit
	// about what the shared limit would. Default: 1.
	Nodes int `json:"nodes,omitempty"`

	// Queue caps generations in flight towards the upstream. Default:
	// nil, no cap.
	Queue *QueueSettings `json:"queue,omitempty"`

	// Requests with a missing or invalid key allowed per client address
	// (per /64 for IPv6) in any rolling AuthFailuresPeriod; past it the
	// address gets 429 rate_limit_exceeded before any key lookup until
	// the oldest failure leaves the window. 0 turns the guard off.
	// Default: 60, as many as revision B admits per key.
	AuthFailures *int `json:"auth_failures,omitempty"`
	// The window of AuthFailures. Default: 1m.
	AuthFailuresPeriod duration.Duration `json:"auth_failures_period,omitempty"`
}

// QueueSettings configure the admission queue in front of the upstream
// (QueueConfig is what NewQueue takes).
type QueueSettings struct {
	// Generations in flight at once: per node without Redis, across all
	// nodes with it. Required.
	Slots int `json:"slots"`
	// Requests that may wait on one node; one more is refused with 503
	// server_overloaded. Default: 100.
	MaxWaiting int `json:"max_waiting,omitempty"`
	// How long a request may wait for a slot before it is refused with
	// 503 server_overloaded. Default: 30s.
	MaxWait duration.Duration `json:"max_wait,omitempty"`
}

// Defaults of the body settings.
const (
	DefaultMaxBodyBytes = 32 << 20
	DefaultBodyMemory   = 256 << 20
	DefaultBodyTimeout  = 30 * time.Second
)

// Defaults of the limit on failed authentications per client address
// (Config.AuthFailures). Well above what a client with a mistyped or
// revoked key sends before someone notices, and far below what key
// guessing or a flood of bad keys would need.
const (
	DefaultAuthFailures       = 60
	DefaultAuthFailuresPeriod = time.Minute
)

// Apply overrides the profile's limits with the configured ones.
func (c *Config) Apply(p *policy.Profile) {
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

// BodyReader is the reader of request bodies c configures, with a new
// memory budget of the node's and each account's share; c may be nil.
func (c *Config) BodyReader() body.Reader {
	return body.Reader{
		MaxBytes: c.maxBodyBytes(),
		Timeout:  c.bodyTimeout(),
		Budget:   body.NewBudget(c.bodyMemory(), c.accountBodyMemory()),
	}
}

func (c *Config) bodyMemory() int64 {
	if c == nil || c.BodyMemory <= 0 {
		return DefaultBodyMemory
	}
	return c.BodyMemory
}

func (c *Config) accountBodyMemory() int64 {
	total := c.bodyMemory()
	if c != nil && c.AccountBodyMemory > 0 {
		return min(c.AccountBodyMemory, total)
	}
	return min(max(total/4, c.maxBodyBytes()), total)
}

func (c *Config) bodyTimeout() time.Duration {
	if c == nil || c.BodyTimeout <= 0 {
		return DefaultBodyTimeout
	}
	return time.Duration(c.BodyTimeout)
}

func (c *Config) maxBodyBytes() int64 {
	if c == nil || c.MaxBodyBytes <= 0 {
		return DefaultMaxBodyBytes
	}
	return c.MaxBodyBytes
}

// AuthFailureLimit is the limit on failed authentications per client
// address, defaults applied; n is 0 when the guard is off. c may be nil.
func (c *Config) AuthFailureLimit() (n int, period time.Duration) {
	n, period = DefaultAuthFailures, DefaultAuthFailuresPeriod
	if c == nil {
		return n, period
	}
	if c.AuthFailures != nil {
		n = *c.AuthFailures
	}
	if c.AuthFailuresPeriod > 0 {
		period = time.Duration(c.AuthFailuresPeriod)
	}
	return n, period
}

// ParseFailurePolicy reads a Redis failure policy: fail_open (the
// default, for "") or fail_closed.
func ParseFailurePolicy(s string) (FailurePolicy, error) {
	switch s {
	case "", "fail_open":
		return FailOpen, nil
	case "fail_closed":
		return FailClosed, nil
	}
	return 0, fmt.Errorf("unknown Redis failure policy %q: want fail_open or fail_closed", s)
}

// Validate checks what JSON decoding cannot. c may be nil.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	if _, err := ParseFailurePolicy(c.RatePolicy); err != nil {
		return err
	}
	if _, err := ParseFailurePolicy(c.StreamPolicy); err != nil {
		return err
	}
	if c.BodyMemory < 0 || c.AccountBodyMemory < 0 || c.MaxBodyBytes < 0 || c.BodyTimeout < 0 {
		return errors.New("max_body, body_memory, account_body_memory and body_timeout must not be negative")
	}
	if c.Queue != nil && c.Queue.Slots <= 0 {
		return errors.New("queue: slots must be positive")
	}
	for model, mp := range c.Prices {
		if model == "" || mp.InputPerMTok < 0 || mp.OutputPerMTok < 0 {
			return fmt.Errorf("prices: %q needs a model name and prices that are not negative", model)
		}
	}
	return nil
}

// RedisConfig is the configuration of the Redis limiter c tunes, over
// client, its keys under prefix; c may be nil. Its policies were
// checked by Validate.
func (c *Config) RedisConfig(client redis.UniversalClient, prefix string, logger *zap.Logger) RedisConfig {
	if c == nil {
		c = new(Config)
	}
	ratePolicy, _ := ParseFailurePolicy(c.RatePolicy)
	streamPolicy, _ := ParseFailurePolicy(c.StreamPolicy)
	return RedisConfig{
		Client:        client,
		Prefix:        prefix,
		Timeout:       time.Duration(c.RedisTimeout),
		LeaseTTL:      time.Duration(c.LeaseTTL),
		RatePolicy:    ratePolicy,
		StreamPolicy:  streamPolicy,
		FallbackNodes: c.Nodes,
		Logger:        logger,
	}
}

// QueueConfig is the configuration of the queue q describes, its slots
// counted by slots (nil: in process).
func (q *QueueSettings) QueueConfig(slots Leaser) QueueConfig {
	return QueueConfig{Slots: slots, Limit: q.Slots, MaxWaiting: q.MaxWaiting, MaxWait: time.Duration(q.MaxWait)}
}
