package limits

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// TestRedisRollingWindowLayouts: a rolling window up to rollingLogMax is
// a log of 8-byte times in one string, a larger one a sorted set, and
// both answer alike: the count, the time until the oldest admission
// leaves (to the millisecond), the time until the newest does.
func TestRedisRollingWindowLayouts(t *testing.T) {
	for _, tc := range []struct {
		limit   int
		keyType string
	}{
		{rollingLogMax, "string"},
		{rollingLogMax + 1, "zset"},
	} {
		t.Run(tc.keyType, func(t *testing.T) {
			c := testRedisClient(t)
			clock := newFakeClock()
			l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now})
			r := Rate{Limit: tc.limit, Period: time.Minute, Rolling: true}
			for range tc.limit - 2 {
				allow(t, l, "k", r)
				clock.Advance(time.Microsecond)
			}
			clock.Advance(30 * time.Second)
			for i := range 2 {
				if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 1-i || !near(res.ResetAfter, time.Minute) {
					t.Fatalf("at 30s, request %d: %+v", i+1, res)
				}
			}
			res := allow(t, l, "k", r)
			if res.Allowed || !near(res.RetryAfter, 30*time.Second) || !near(res.ResetAfter, time.Minute) {
				t.Fatalf("request %d: %+v, want refused, retry after 30s, reset after 1m", tc.limit+1, res)
			}
			clock.Advance(30*time.Second - time.Millisecond)
			if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, time.Millisecond) {
				t.Fatalf("1ms before the oldest leaves: %+v, want refused, retry after 1ms", res)
			}
			clock.Advance(time.Millisecond)
			// The first limit-2 came within 254µs of each other: all of
			// them have left, the two of 30s ago and this one remain.
			if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != tc.limit-3 {
				t.Fatalf("once the oldest left: %+v, want admitted with %d remaining", res, tc.limit-3)
			}

			ctx := context.Background()
			key := l.windowKey("", "k")
			if tc.keyType == "string" {
				key = l.logKey("", "k")
				if n := c.StrLen(ctx, key).Val(); n != 8*3 {
					t.Errorf("the log holds %d bytes, want 8 for each of the 3 admissions in the window", n)
				}
			}
			if typ := c.Type(ctx, key).Val(); typ != tc.keyType {
				t.Errorf("%s is a %s, want a %s", key, typ, tc.keyType)
			}
			// The log may live a second longer than the period: it is
			// extended once a second (logLua).
			within := time.Minute
			if tc.keyType == "string" {
				within += time.Second
			}
			if ttl := c.PTTL(ctx, key).Val(); ttl <= 0 || ttl > within {
				t.Errorf("%s expires in %s, want within %s", key, ttl, within)
			}
		})
	}
}

// TestRedisHintsDoNotHideExpiredSlotsAndHolds: the mirror's hints let
// an admission skip looking for expired slots and holds, but never past
// the earliest expiry: a stream whose node stopped renewing (here: its
// clock jumped past the lease TTL) frees its slot and its hold for the
// next admission on another node, and not before.
func TestRedisHintsDoNotHideExpiredSlotsAndHolds(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	prefix := testPrefix(t, c)
	nodes := []*Redis{
		newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, Now: clock.Now, LeaseTTL: 30 * time.Second}),
		newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, Now: clock.Now, LeaseTTL: 30 * time.Second}),
	}
	stream := func(l *Redis) (Admission, error) {
		return l.Admit(context.Background(), AdmitRequest{Key: "k", Account: "acct",
			Rate:        Rate{Limit: 100, Period: time.Minute, Rolling: true},
			StreamLimit: 1, WantLease: true,
			Reserve: Reservation{Account: "acct", Balance: 10, Want: 10, Min: 1}})
	}
	first, err := stream(nodes[0])
	if err != nil || first.Lease == nil || first.Hold.Cents() != 10 {
		t.Fatalf("first stream: %+v, %v", first, err)
	}
	defer first.Lease.Release()
	defer first.Hold.Release()
	clock.Advance(29 * time.Second)
	if _, err := stream(nodes[1]); !errors.As(err, new(*BalanceError)) {
		t.Fatalf("29s in, with the first stream's hold of the whole balance alive: %v, want refused for the balance", err)
	}
	if a, err := nodes[1].Admit(context.Background(), AdmitRequest{Key: "k", Account: "acct", StreamLimit: 1, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 20, Want: 1, Min: 1}}); !isStreamLimit(err) {
		t.Fatalf("29s in, with the first stream's slot alive: %+v, %v, want refused for the slot", a, err)
	}
	clock.Advance(2 * time.Second)
	second, err := stream(nodes[1])
	if err != nil || second.Lease == nil || second.Hold.Cents() != 10 {
		t.Fatalf("31s in, the first stream's slot and hold expired: %+v, %v, want a slot and 10 held", second, err)
	}
	second.Hold.Release()
	second.Lease.Release()
}

func isStreamLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le) && le.Limit == LimitStreams
}

// TestRedisLogDropsTimesThatLeftInBulk: the log keeps the times that
// left the window at its head until they are 32, and then drops them all
// at once: it never holds more than the window's times and 32 more.
func TestRedisLogDropsTimesThatLeftInBulk(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now})
	r := Rate{Limit: rollingLogMax, Period: time.Second, Rolling: true}
	key := l.logKey("", "k")
	var times []time.Time
	mostLeft := 0
	for i := range 600 {
		if res := allow(t, l, "k", r); !res.Allowed {
			t.Fatalf("admission %d: %+v", i, res)
		}
		now := clock.Now()
		times = append(times, now)
		inWindow := 0
		for _, at := range times {
			if at.After(now.Add(-r.Period)) {
				inWindow++
			}
		}
		n := int(c.StrLen(context.Background(), key).Val() / 8)
		if n > inWindow+32 {
			t.Fatalf("admission %d: the log holds %d times, %d of them in the window", i, n, inWindow)
		}
		mostLeft = max(mostLeft, n-inWindow)
		clock.Advance(10 * time.Millisecond)
	}
	if mostLeft < 31 {
		t.Errorf("the log never kept more than %d times that left the window; want them dropped in bulk", mostLeft)
	}
}

// TestRedisLogKeepsTimesInOrderWhenTheClockGoesBack: an admission whose
// time is earlier than the log's last (a failover to a server whose
// clock is behind) goes in order, and the window counts it as it would
// have at its time.
func TestRedisLogKeepsTimesInOrderWhenTheClockGoesBack(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now})
	r := Rate{Limit: 3, Period: time.Minute, Rolling: true}
	start := clock.Now()
	for _, at := range []time.Duration{0, 20 * time.Second, 15 * time.Second} {
		clock.Set(start.Add(at))
		if res := allow(t, l, "k", r); !res.Allowed {
			t.Fatalf("at %s: %+v, want admitted", at, res)
		}
	}
	clock.Set(start.Add(16 * time.Second))
	if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, 44*time.Second) || !near(res.ResetAfter, 64*time.Second) {
		t.Fatalf("at 16s: %+v, want refused, retry after 44s (the first leaves at 60s), reset after 64s (the last leaves at 80s)", res)
	}
	log := c.Get(context.Background(), l.logKey("", "k")).Val()
	var got []time.Duration
	for i := 0; i+8 <= len(log); i += 8 {
		secs := math.Float64frombits(binary.LittleEndian.Uint64([]byte(log[i : i+8])))
		got = append(got, time.Duration(math.Round((secs-start.Sub(epoch2017).Seconds())*1e3))*time.Millisecond)
	}
	if want := []time.Duration{0, 15 * time.Second, 20 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("the log holds %v, want %v", got, want)
	}
	clock.Set(start.Add(60*time.Second + time.Millisecond))
	if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 0 {
		t.Fatalf("at 60.001s, once the first left: %+v, want admitted with none remaining", res)
	}
}
