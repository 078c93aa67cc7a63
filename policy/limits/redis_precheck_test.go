package limits

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisPrecheckAsksNothing: Precheck refuses a key whose rate the
// node saw spent, and a ledger balance below the minimum, without a
// command sent to Redis; what another node spent, or a rate changed by a
// reload, it leaves to Admit.
func TestRedisPrecheckAsksNothing(t *testing.T) {
	c := testRedisClient(t)
	trips := &tripCounter{counts: func(cmd redis.Cmder) bool { return !connSetup(cmd) }}
	c.AddHook(trips)
	prefix := testPrefix(t, c)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix})
	other := newTestRedis(t, RedisConfig{Client: testRedisClient(t), Prefix: prefix})
	ctx := context.Background()
	rate := Rate{Limit: 1, Period: time.Minute, Rolling: true}
	if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Rate: rate}); err != nil {
		t.Fatal(err)
	}

	before := trips.n.Load()
	var le *LimitError
	for range 100 {
		if _, err := l.Precheck(AdmitRequest{Key: "k", Rate: rate}); !errors.As(err, &le) {
			t.Fatalf("the spent key: %v, want a rate refusal", err)
		}
		if _, err := l.Precheck(AdmitRequest{Key: "fresh", Rate: rate}); err != nil {
			t.Fatalf("another key: %v", err)
		}
		_, err := l.Precheck(AdmitRequest{Key: "fresh", Rate: rate, Reserve: Reservation{Account: "broke", Balance: 0}})
		var be *BalanceError
		if !errors.As(err, &be) {
			t.Fatalf("a zero balance: %v", err)
		}
	}
	if n := trips.n.Load() - before; n != 0 {
		t.Fatalf("300 prechecks sent %d commands to Redis, want none", n)
	}

	// The other node has not seen the key spent: Admit tells it.
	if _, err := other.Precheck(AdmitRequest{Key: "k", Rate: rate}); err != nil {
		t.Fatalf("a node that never admitted the key: %v", err)
	}
	if _, err := other.Admit(ctx, AdmitRequest{Key: "k", Rate: rate}); !errors.As(err, &le) {
		t.Fatalf("the other node's admission: %v, want a rate refusal", err)
	}
	if _, err := other.Precheck(AdmitRequest{Key: "k", Rate: rate}); !errors.As(err, &le) {
		t.Fatalf("the other node after its refusal: %v, want a rate refusal", err)
	}
	// A reload that raises the limit: what was known of the old one is
	// not applied to the new.
	raised := Rate{Limit: 2, Period: time.Minute, Rolling: true}
	if _, err := l.Precheck(AdmitRequest{Key: "k", Rate: raised}); err != nil {
		t.Fatalf("a raised limit: %v", err)
	}
	if _, err := l.Admit(ctx, AdmitRequest{Key: "k", Rate: raised}); err != nil {
		t.Fatalf("a raised limit's admission: %v", err)
	}
}
