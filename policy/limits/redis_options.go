package limits

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// RedisOptions parses a redis:// or rediss:// URL (redis.ParseURL's
// syntax) into the client options the limiter is built for:
//
//   - Every call gives up at its context's deadline, so a Redis that stops
//     answering costs a request the limiter's timeout, not the client's
//     read timeout.
//   - The connection speaks RESP2 unless the URL asks for another protocol
//     (?protocol=3). The limiter uses no RESP3 feature (push messages,
//     client-side caching), and over RESP3 go-redis looks for pending push
//     messages before reading each reply: 5–6% of the gateway's CPU in the
//     distributed bench, for messages that never come.
//   - The pool keeps its check of a connection taken from it (a peek at
//     the socket: one system call, about 2,100 instructions and 3 of a
//     command's 6 allocations, BenchmarkRedisClientCommand), which no
//     option of go-redis v9.23 turns off or makes less frequent. A
//     connection hiding its descriptor would skip it, and hand out a
//     connection Redis closed (after a restart, all of them) for a
//     command to fail on. At 32 clients, where pipelines carry many
//     requests' admissions, it is 0.09 of a check per request.
//   - A connection of the pipeline pool reads and writes through 32 KiB
//     buffers, as every other connection does, unless the URL asks for
//     more (pipeline_read_buffer_size, pipeline_write_buffer_size).
//     go-redis gives them 128 KiB each by default, for pipelines that
//     carry large values; the limiter's carry its scripts' keys and numbers,
//     a few hundred bytes a command (a batch of 32 admissions fits in one
//     write), and the 96 KiB each buffer saves, twice for each of the few
//     pipeline connections, is memory the gateway holds for nothing
//     (about 0.8 KiB per stream of a thousand idle streams in the bench).
func RedisOptions(rawURL string) (*redis.Options, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	opts.ContextTimeoutEnabled = true
	if p := protocol(rawURL); p != 0 {
		opts.Protocol = p
	}
	opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize = pipelineBuffers(opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize)
	return opts, nil
}

// pipelineBufferSize is the pipeline pool's buffers' size (RedisOptions).
const pipelineBufferSize = 32 << 10

// pipelineBuffers is the pipeline pool's read and write buffer sizes:
// the URL's, where it sets them, else pipelineBufferSize.
func pipelineBuffers(read, write int) (int, int) {
	if read == 0 {
		read = pipelineBufferSize
	}
	if write == 0 {
		write = pipelineBufferSize
	}
	return read, write
}

// protocol is 2 (see RedisOptions) when the URL asks for no protocol;
// else 0, and the URL's parser has set what it asks for.
func protocol(rawURL string) int {
	u, err := url.Parse(rawURL)
	if err != nil || !u.Query().Has("protocol") {
		return 2
	}
	return 0 // the parser has read it
}

// RedisMode says what a Redis URL names.
type RedisMode string

const (
	// RedisSingle is one server (a primary), addressed directly. The
	// zero value.
	RedisSingle RedisMode = ""
	// RedisCluster is a Redis Cluster: the URL names one or more of its
	// nodes (redis://host:port?addr=host2:port&addr=host3:port), from
	// which the client learns the others and which primary serves which
	// slot.
	RedisCluster RedisMode = "cluster"
	// RedisSentinel is a primary that Redis Sentinel watches and fails
	// over: the URL names the sentinels and the primary's name
	// (redis://sentinel1:26379/0?master_name=main&addr=sentinel2:26379).
	RedisSentinel RedisMode = "sentinel"
)

// ParseRedisMode reads "single" (or ""), "cluster" or "sentinel".
func ParseRedisMode(s string) (RedisMode, error) {
	switch m := RedisMode(s); m {
	case RedisSingle, RedisCluster, RedisSentinel:
		return m, nil
	case "single":
		return RedisSingle, nil
	}
	return "", fmt.Errorf("redis mode %q: want single, cluster or sentinel", s)
}

// NewRedisClient returns the client for a URL of mode, with the options
// RedisOptions sets (calls end at their context's deadline, RESP2 unless
// the URL asks for another protocol, the pipeline pool's buffers 32 KiB
// unless it asks for others). In cluster mode a pipeline is split
// by slot and sent to each primary, and a command follows the slot to its
// new primary after a failover (MOVED); the admission and its releases
// stay one script each, because all of an account's keys share one slot.
func NewRedisClient(rawURL string, mode RedisMode) (redis.UniversalClient, error) {
	switch mode {
	case RedisSingle:
		opts, err := RedisOptions(rawURL)
		if err != nil {
			return nil, err
		}
		return redis.NewClient(opts), nil
	case RedisCluster:
		opts, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, err
		}
		opts.ContextTimeoutEnabled = true
		if p := protocol(rawURL); p != 0 {
			opts.Protocol = p
		}
		opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize = pipelineBuffers(opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize)
		return redis.NewClusterClient(opts), nil
	case RedisSentinel:
		opts, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, err
		}
		if opts.MasterName == "" {
			return nil, errors.New("redis sentinel URL: master_name is missing (redis://sentinel:26379/0?master_name=<name>)")
		}
		opts.ContextTimeoutEnabled = true
		if p := protocol(rawURL); p != 0 {
			opts.Protocol = p
		}
		opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize = pipelineBuffers(opts.PipelineReadBufferSize, opts.PipelineWriteBufferSize)
		return redis.NewFailoverClient(opts), nil
	}
	return nil, fmt.Errorf("redis mode %q: want single, cluster or sentinel", mode)
}

// endsAtDeadline reports whether client ends a call at its context's
// deadline (ContextTimeoutEnabled), as the clients NewRedisClient builds
// do. A client of another kind is taken not to.
func endsAtDeadline(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
