package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisEnv names the environment variable holding the URL of the Redis
// server tests use.
const RedisEnv = "SWITCHYARD_TEST_REDIS"

// DefaultRedis is the URL used when RedisEnv is unset.
const DefaultRedis = "redis://127.0.0.1:6379/0"

// Redis returns the URL of the test Redis server and a key prefix private
// to t. Every key under the prefix (and under "rate:" and the prefix, where
// redis_rate writes) is deleted when t ends. The test fails
// if Redis does not answer PING.
func Redis(t testing.TB) (url, prefix string) {
	t.Helper()
	url = getenv(RedisEnv, DefaultRedis)
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("%s=%q: %v", RedisEnv, url, err)
	}
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		t.Fatalf("Redis not reachable at %s (set %s to change it): run `make test`, which starts it, or start it yourself: %v",
			redact(url), RedisEnv, err)
	}
	prefix = "sytest:" + randomName(12) + ":"
	t.Cleanup(func() {
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// go-redis/redis_rate puts "rate:" in front of the keys it is
		// given, so GCRA keys live under that prefix too.
		for _, p := range []string{prefix, "rate:" + prefix} {
			if err := deletePrefix(ctx, client, p); err != nil {
				t.Errorf("deleting test keys %s*: %v", p, err)
			}
		}
	})
	return url, prefix
}

func deletePrefix(ctx context.Context, client *redis.Client, prefix string) error {
	iter := client.Scan(ctx, 0, prefix+"*", 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := client.Del(ctx, batch...).Err(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return client.Del(ctx, batch...).Err()
	}
	return nil
}
