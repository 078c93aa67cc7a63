package limits

import (
	"context"
	"testing"
	"time"
)

// TestRedisSlotAndHoldSetsLiveAsLongAsTheirLongestMember: the admit
// script gives the stream slots' and the holds' sets the expiry of their
// newest member and a second, never shortens a longer one (a member of
// another node's longer TTL), and gives one that lost its expiry an
// expiry again.
func TestRedisSlotAndHoldSetsLiveAsLongAsTheirLongestMember(t *testing.T) {
	c := testRedisClient(t)
	ttl := 20 * time.Second
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := AdmitRequest{Key: "key", StreamLimit: 100, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 1000, Want: 4, Min: 1}}
	owner, err := req.owner()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{"slots": r.leaseKey(owner, req.Key), "holds": r.holdsKey(req.Reserve.Account)}
	admit := func() {
		t.Helper()
		a, err := r.Admit(ctx, req)
		if err != nil || a.Lease == nil || a.Hold == nil || a.Fallback {
			t.Fatalf("admit: %+v, %v", a, err)
		}
		t.Cleanup(func() { a.Hold.Settle(0); a.Lease.Release() })
	}
	// want is the expiry the set should have, with the slack of the
	// time the test took since the admission.
	check := func(when string, want time.Duration) {
		t.Helper()
		for name, key := range sets {
			got, err := c.PTTL(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got > want || got < want-5*time.Second {
				t.Errorf("%s: the %s set expires in %v, want about %v", when, name, got, want)
			}
		}
	}

	admit() // both sets created
	check("created", ttl+time.Second)
	admit() // both sets had members
	check("added to", ttl+time.Second)

	for _, key := range sets {
		if err := c.PExpire(ctx, key, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	admit()
	check("with a longer expiry", time.Hour)

	for _, key := range sets {
		if err := c.Persist(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
	}
	admit()
	check("without an expiry", ttl+time.Second)
}
