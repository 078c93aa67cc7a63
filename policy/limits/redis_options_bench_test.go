package limits

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// BenchmarkRedisClientCommand is one command (PING) through the client
// NewRedisClient builds, with a deadline as the limiter's calls have:
// what go-redis costs a command, the round trip's system calls
// included. checkless is the same client on connections that hide their
// file descriptor, which go-redis's pool checks with a peek before each
// use: the difference is that health check's price. The gateway keeps
// the check (see RedisOptions).
//
//	go test ./policy/limits -run '^$' -bench RedisClientCommand -benchmem
func BenchmarkRedisClientCommand(b *testing.B) {
	url, _ := testenv.Redis(b)
	for _, c := range []struct {
		name   string
		dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	}{
		{"checked", nil},
		{"checkless", func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			return struct{ net.Conn }{conn}, err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			opts, err := RedisOptions(url)
			if err != nil {
				b.Fatal(err)
			}
			opts.Dialer = c.dialer
			client := redis.NewClient(opts)
			defer client.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if err := client.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := client.Ping(ctx).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
