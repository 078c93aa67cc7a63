package limits

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// The Sentinel suite: one primary, one replica and three sentinels,
// started by the test (testenv.StartRedisSentinels), with the client the
// gateway builds for `redis_mode sentinel`. The primary is killed under
// load; the sentinels promote the replica and the client follows them.
func TestSentinelPrimaryCrashUnderLoad(t *testing.T) {
	s := testenv.StartRedisSentinels(t)
	const leaseTTL = 3 * time.Second
	runFailover(t, s.URL(), RedisSentinel, leaseTTL, func(*Redis, redis.UniversalClient) {
		s.Primary.Kill()
		waitPrimary(t, s.Replica)
	}, false)
}
