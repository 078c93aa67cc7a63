package limits

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRedisOptions(t *testing.T) {
	for _, tc := range []struct {
		url      string
		protocol int
	}{
		{"redis://127.0.0.1:6379/0", 2},
		{"rediss://user:pw@redis.internal:6380/2?dial_timeout=3s", 2},
		{"redis://127.0.0.1:6379/0?protocol=3", 3},
		{"redis://127.0.0.1:6379/0?protocol=2", 2},
	} {
		opts, err := RedisOptions(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if opts.Protocol != tc.protocol {
			t.Errorf("%s: protocol %d, want %d", tc.url, opts.Protocol, tc.protocol)
		}
		if !opts.ContextTimeoutEnabled {
			t.Errorf("%s: calls do not end at their context's deadline", tc.url)
		}
	}
	if _, err := RedisOptions("http://127.0.0.1:6379"); err == nil {
		t.Error("an http:// URL was taken for Redis")
	}
}

func TestNewRedisClientModes(t *testing.T) {
	for _, tc := range []struct {
		url  string
		mode string
		want string // the client's type, or "" for an error
	}{
		{"redis://127.0.0.1:6379/0", "", "*redis.Client"},
		{"redis://127.0.0.1:6379/0", "single", "*redis.Client"},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", "cluster", "*redis.ClusterClient"},
		{"redis://127.0.0.1:26379/0?master_name=main&addr=127.0.0.1:26380", "sentinel", "*redis.Client"},
		{"redis://127.0.0.1:26379/0", "sentinel", ""}, // no master_name
		{"redis://127.0.0.1:6379/0", "replicated", ""},
	} {
		mode, err := ParseRedisMode(tc.mode)
		var c redis.UniversalClient
		if err == nil {
			c, err = NewRedisClient(tc.url, mode)
		}
		if tc.want == "" {
			if err == nil {
				c.Close()
				t.Errorf("%s %s: no error", tc.mode, tc.url)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tc.mode, tc.url, err)
		}
		if got := fmt.Sprintf("%T", c); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.mode, tc.url, got, tc.want)
		}
		// A lone admission is sent by its caller (Redis.sendOwn).
		if !endsAtDeadline(c) {
			t.Errorf("%s %s: the client is taken not to end calls at their deadline", tc.mode, tc.url)
		}
		c.Close()
	}
}

// TestEndsAtDeadline: a client that does not end calls at their
// context's deadline is handed its admissions by the sender, whose
// caller then returns at the limiter's timeout all the same.
func TestEndsAtDeadline(t *testing.T) {
	for _, tc := range []struct {
		client redis.UniversalClient
		want   bool
	}{
		{redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), false},
		{redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}), true},
		{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), false},
		{redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}, ContextTimeoutEnabled: true}), true},
	} {
		if got := endsAtDeadline(tc.client); got != tc.want {
			t.Errorf("%T: %v, want %v", tc.client, got, tc.want)
		}
		tc.client.Close()
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	r := newTestRedis(t, RedisConfig{Client: c})
	if r.sendsOwn {
		t.Error("a limiter sends its callers' admissions over a client that does not end calls at their deadline")
	}
}

// TestRedisPipelineBuffers: every mode's pipeline connections get the
// 32 KiB buffers of the others, not go-redis's 128 KiB, unless the URL
// asks for a size.
func TestRedisPipelineBuffers(t *testing.T) {
	for _, tc := range []struct {
		url         string
		mode        RedisMode
		read, write int
	}{
		{"redis://127.0.0.1:6379/0", RedisSingle, 32 << 10, 32 << 10},
		{"redis://127.0.0.1:6379/0?pipeline_read_buffer_size=65536", RedisSingle, 64 << 10, 32 << 10},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001", RedisCluster, 32 << 10, 32 << 10},
		{"redis://127.0.0.1:7000?pipeline_write_buffer_size=131072", RedisCluster, 32 << 10, 128 << 10},
		{"redis://127.0.0.1:26379/0?master_name=main", RedisSentinel, 32 << 10, 32 << 10},
	} {
		c, err := NewRedisClient(tc.url, tc.mode)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		var read, write int
		switch c := c.(type) {
		case *redis.Client:
			read, write = c.Options().PipelineReadBufferSize, c.Options().PipelineWriteBufferSize
		case *redis.ClusterClient:
			read, write = c.Options().PipelineReadBufferSize, c.Options().PipelineWriteBufferSize
		}
		c.Close()
		if read != tc.read || write != tc.write {
			t.Errorf("%s (%s): pipeline buffers %d and %d, want %d and %d", tc.url, tc.mode, read, write, tc.read, tc.write)
		}
	}
}
