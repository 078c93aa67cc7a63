package limits

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisHoldHeartbeat: renewals keep a hold past its TTL on the
// server clock, and settling it frees it and lowers the mirror.
func TestRedisHoldHeartbeat(t *testing.T) {
	l, renewed := newHeartbeatRedis(t)
	hold := mustHold(t, l, 10, 10, 10)
	waitRenewals(t, renewed, "hold")
	_, err := reserve(l, "k", 10, 1)
	wantBalanceRefusal(t, err, 0)
	hold.Settle(4)
	mustHold(t, l, 10, 100, 6).Release()
}

// TestRedisReserveFallsBack: with Redis gone and the default FailOpen,
// the in-process fallback holds against the ledger balance instead.
func TestRedisReserveFallsBack(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: closedPort(t), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	l := newTestRedis(t, RedisConfig{Client: client, Timeout: 50 * time.Millisecond})
	a, err := reserve(l, "k", 5, 4)
	if err != nil || !a.Fallback || a.Hold.Cents() != 4 {
		t.Fatalf("first reservation: %+v, %v; want 4 cents held by the fallback", a, err)
	}
	mustHold(t, l, 5, 4, 1)
	_, err = reserve(l, "k", 5, 4)
	wantBalanceRefusal(t, err, 0)
	a.Hold.Settle(2)
	mustHold(t, l, 5, 4, 2)
}
