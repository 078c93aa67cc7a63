package limits

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"
)

// scriptSeconds is t as the scripts count time: seconds since 2017.
func scriptSeconds(t time.Time) float64 { return t.Sub(epoch2017).Seconds() }

// TestRedisExpiryScoresAreWholeSeconds: the admission and the renewal
// write a slot's and a hold's expiry as now + TTL rounded up to a whole
// second, which a listpack keeps as an integer, never earlier than now +
// TTL, and the admission the sets' lives as whole seconds too. The clock
// here stands a quarter of a second into a second, so none of them
// would be whole otherwise.
func TestRedisExpiryScoresAreWholeSeconds(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	clock.Advance(250 * time.Millisecond)
	ttl := 30 * time.Second
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now, LeaseTTL: ttl})
	l.renewEvery = time.Hour // only the renewals below
	ctx := context.Background()
	a := mustAdmit(t, l, AdmitRequest{Key: "k", Account: "acct", StreamLimit: 10, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 1000, Want: 4, Min: 1}})
	if a.Lease == nil || a.Hold == nil {
		t.Fatalf("admitted without a slot or a hold: %+v", a)
	}
	t.Cleanup(func() { a.Hold.Release(); a.Lease.Release() })
	slots, holds := l.leaseKey("acct", "k"), l.holdsKey("acct")
	hold := a.Hold.id + "|" + strconv.FormatInt(a.Hold.Cents(), 10)
	check := func(when string) {
		t.Helper()
		want := math.Ceil(scriptSeconds(clock.Now()) + ttl.Seconds())
		for _, m := range []struct{ key, member string }{{slots, a.Lease.ID()}, {holds, hold}} {
			text, err := c.Do(ctx, "ZSCORE", m.key, m.member).Text()
			if err != nil {
				t.Fatalf("%s: ZSCORE %s %s: %v", when, m.key, m.member, err)
			}
			if got := strconv.FormatFloat(want, 'f', -1, 64); text != got {
				t.Errorf("%s: %s scores %s, want %s (now + TTL rounded up to the second)", when, m.member, text, got)
			}
		}
	}
	check("admitted")
	// The sets' lives, recorded when the admission extended them, are now
	// + TTL + 1 s to the whole second below.
	lives, err := c.HMGet(ctx, l.balanceKey("acct"), "hl", "sl:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	lived := strconv.FormatFloat(math.Floor(scriptSeconds(clock.Now())+ttl.Seconds()+1), 'f', -1, 64)
	if lives[0] != lived || lives[1] != lived {
		t.Errorf("the sets' lives hl, sl:k = %v, %v, want %s (now + TTL + 1 s to the whole second below)", lives[0], lives[1], lived)
	}

	clock.Advance(10*time.Second + 300*time.Millisecond)
	if kept, err := l.renew([]string{slots}, a.Lease.ID()); !kept || err != nil {
		t.Fatalf("renew the slot: %v, %v", kept, err)
	}
	if kept, err := l.renew([]string{holds, l.balanceKey("acct")}, hold); !kept || err != nil {
		t.Fatalf("renew the hold: %v, %v", kept, err)
	}
	check("renewed")
}

// TestRedisDeadHolderGoneWithinTTLAndASecond: the slot and the hold of a
// holder that died (renewals stopped, nothing released) are there for
// at least the TTL and gone no later than a second after it, however the
// admission's time falls in its second: here a microsecond into it, the
// most rounding up adds.
func TestRedisDeadHolderGoneWithinTTLAndASecond(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	clock := newFakeClock()
	clock.Advance(time.Microsecond)
	ttl := 30 * time.Second
	cfg := RedisConfig{Client: c, Prefix: prefix, Now: clock.Now, LeaseTTL: ttl}
	crashed, survivor := newTestRedis(t, cfg), newTestRedis(t, cfg)
	ctx := context.Background()
	// The whole balance and the one slot: while the dead holder's hold
	// lives nothing more is held, while its slot lives no stream opens.
	stream := AdmitRequest{Key: "k", Account: "acct", StreamLimit: 1, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 4, Want: 4, Min: 1}}
	slotOnly := AdmitRequest{Key: "k", Account: "acct", StreamLimit: 1, WantLease: true}
	dead := mustAdmit(t, crashed, stream)
	dead.Lease.abandon()
	dead.Hold.abandon()

	clock.Advance(ttl - time.Millisecond)
	_, err := survivor.Admit(ctx, stream)
	wantBalanceRefusal(t, err, 0)
	_, err = survivor.Admit(ctx, slotOnly)
	wantStreamRefusal(t, err, 1)

	clock.Advance(time.Second + time.Millisecond) // TTL + 1 s after the admission
	a := mustAdmit(t, survivor, stream)
	if a.Lease == nil || a.Hold == nil || a.Hold.Cents() != 4 {
		t.Fatalf("a second after the TTL: %+v, want the slot and the whole balance held", a)
	}
	a.Hold.Release()
	a.Lease.Release()
}

// TestRedisOlderGatewaysFractionalScores: slots and holds an older
// gateway wrote, whose expiries are not whole seconds, share the sets
// with the whole-second ones: the admission counts both, keeps the
// earlier expiry, fractional, as its hints, and drops each at its own
// expiry, not at the next whole second. The older gateway's expire
// after the newer one's now + TTL and before it rounded up (a longer
// TTL, or a renewal), where a hint lowered by comparing now + TTL but
// written as the rounded expiry would rise past them.
func TestRedisOlderGatewaysFractionalScores(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	ttl := 30 * time.Second
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now, LeaseTTL: ttl})
	l.renewEvery = time.Hour // the slots and holds expire as written
	ctx := context.Background()
	start := scriptSeconds(clock.Now())
	// An older gateway's slot and hold of 50, expiring 0.9 s into the
	// second before the newer one's.
	older := strconv.FormatFloat(start+0.9+ttl.Seconds(), 'f', 6, 64)
	if err := c.Do(ctx, "ZADD", l.leaseKey("acct", "k"), older, "older-slot").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "ZADD", l.holdsKey("acct"), older, "older-hold|50").Err(); err != nil {
		t.Fatal(err)
	}
	stream := func(want, min int64) AdmitRequest {
		return AdmitRequest{Key: "k", Account: "acct", StreamLimit: 2, WantLease: true,
			Reserve: Reservation{Account: "acct", Balance: 100, Want: want, Min: min}}
	}
	// available is what a refused admission reports is left to hold.
	available := func(when string, want int64) {
		t.Helper()
		_, err := l.Admit(ctx, stream(100, want+1))
		if be, ok := errors.AsType[*BalanceError](err); !ok || be.Available != want {
			t.Fatalf("%s: %v, want a balance refusal with %d available", when, err, want)
		}
	}

	clock.Advance(750 * time.Millisecond)
	newer := mustAdmit(t, l, stream(4, 1)) // expires at start + 31
	if newer.Lease == nil || newer.Hold.Cents() != 4 {
		t.Fatalf("beside the older gateway's: %+v, want a slot and 4 held", newer)
	}
	available("beside the older gateway's", 100-50-4)
	_, err := l.Admit(ctx, stream(1, 1))
	wantStreamRefusal(t, err, 2)

	// The older gateway's are gone at their own expiry.
	clock.Advance(30*time.Second + 150*time.Millisecond - time.Millisecond)
	available("a millisecond before the older gateway's expiry", 100-50-4)
	clock.Advance(time.Millisecond)
	a := mustAdmit(t, l, stream(1, 1))
	if a.Lease == nil || a.Hold.Cents() != 1 {
		t.Fatalf("at the older gateway's expiry: %+v, want its slot free and 1 held", a)
	}
	available("at the older gateway's expiry", 100-4-1)
	a.Hold.Release()
	a.Lease.Release()
	l.Flush()

	// And the newer one's at its whole second.
	clock.Advance(100*time.Millisecond - time.Millisecond)
	available("a millisecond before the newer one's expiry", 100-4)
	clock.Advance(time.Millisecond)
	available("at the newer one's expiry", 100)
	newer.Hold.Release()
	newer.Lease.Release()
}
