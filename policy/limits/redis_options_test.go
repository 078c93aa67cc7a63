package limits

import "testing"

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
