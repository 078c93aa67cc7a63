package limits

import (
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
func RedisOptions(rawURL string) (*redis.Options, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	opts.ContextTimeoutEnabled = true
	if u, err := url.Parse(rawURL); err == nil && !u.Query().Has("protocol") {
		opts.Protocol = 2
	}
	return opts, nil
}
