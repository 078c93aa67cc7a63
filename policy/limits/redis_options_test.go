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
		c.Close()
	}
}
