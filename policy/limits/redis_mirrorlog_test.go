package limits

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
)

// TestRedisLogInTheMirrorOutlivesTheBalance: a key's rolling log lives
// in its account's mirror, and a seed of the mirror's money (after
// BalanceTTL) keeps it; the hash lives as long as the log needs, however
// short BalanceTTL is. Billed and unbilled admissions of the key count
// in the one window.
func TestRedisLogInTheMirrorOutlivesTheBalance(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now, BalanceTTL: time.Second})
	ctx := context.Background()
	rate := Rate{Limit: 3, Period: time.Minute, Rolling: true}
	billed := func(balance int64) (Admission, error) {
		t.Helper()
		a, err := r.Admit(ctx, AdmitRequest{Key: "k", Account: "acct", Rate: rate,
			Reserve: Reservation{Account: "acct", Balance: balance, Want: 1, Min: 1}})
		if a.Fallback {
			t.Fatalf("Redis did not answer: %v", err)
		}
		if a.Hold != nil {
			a.Hold.Settle(0)
		}
		return a, err
	}
	unbilled := func() (Admission, error) {
		t.Helper()
		a, err := r.Admit(ctx, AdmitRequest{Key: "k", Account: "acct", Rate: rate})
		if a.Fallback {
			t.Fatalf("Redis did not answer: %v", err)
		}
		return a, err
	}
	for i := range 2 {
		if _, err := billed(1000); err != nil {
			t.Fatalf("billed admission %d: %v", i+1, err)
		}
		clock.Advance(100 * time.Millisecond)
	}
	if a, err := unbilled(); err != nil || a.Rate.Remaining != 0 {
		t.Fatalf("the third admission, unbilled: %+v, %v", a, err)
	}
	clock.Advance(2 * time.Second) // the mirror's money is stale: seeded again
	_, err := billed(500)
	if _, ok := errors.AsType[*LimitError](err); !ok {
		t.Fatalf("a fourth admission after the seed: %v, want refused by the rate", err)
	}
	bal := r.balanceKey("acct")
	if got := c.HGet(ctx, bal, "bal").Val(); got != "500" {
		t.Errorf("the mirror's balance after its seed is %q, want 500, the ledger's", got)
	}
	if ttl := c.PTTL(ctx, bal).Val(); ttl < 55*time.Second {
		t.Errorf("the mirror expires in %v, before the log's times leave the window", ttl)
	}
	if n := c.Exists(ctx, r.logKey("acct", "k")).Val(); n != 0 {
		t.Errorf("the key's own log key was written")
	}
	if _, err := unbilled(); err == nil {
		t.Fatal("an unbilled fourth admission was admitted")
	}
	clock.Advance(time.Minute)
	if _, err := unbilled(); err != nil {
		t.Fatalf("once the window passed, unbilled: %v", err)
	}
	if a, err := billed(500); err != nil || a.Rate.Remaining != 1 {
		t.Fatalf("once the window passed, billed: %+v, %v", a, err)
	}
}

// TestRedisMirrorSeedDropsStaleSpendsAndLogs: a seed of the mirror drops
// what an expired mirror dropped with it, the keys' spends, and the logs
// of keys whose times have all left their window, and keeps the logs
// still in theirs.
func TestRedisMirrorSeedDropsStaleSpendsAndLogs(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now, BalanceTTL: time.Second})
	ctx := context.Background()
	admit := func(key string, period time.Duration) {
		t.Helper()
		a, err := r.Admit(ctx, AdmitRequest{Key: key, Account: "acct", Rate: Rate{Limit: 3, Period: period, Rolling: true},
			Reserve: Reservation{Account: "acct", Balance: 1000, Want: 4, Min: 1,
				KeySpend: KeySpend{Key: key, Period: "2026-03", Limit: 100}}})
		if err != nil || a.Fallback {
			t.Fatalf("admit %s: %+v, %v", key, a, err)
		}
		a.Hold.Settle(3)
	}
	bal := r.balanceKey("acct")
	admit("a", 10*time.Second)
	clock.Advance(500 * time.Millisecond)
	admit("c", time.Minute)
	if got := c.HGet(ctx, bal, "ks:a").Val(); got != "3" {
		t.Fatalf("key a's spend in the mirror: %q, want 3", got)
	}
	clock.Advance(11 * time.Second)
	admit("b", time.Minute)
	fields := c.HKeys(ctx, bal).Val()
	has := func(f string) bool {
		for _, g := range fields {
			if g == f {
				return true
			}
		}
		return false
	}
	for _, f := range []string{"ks:a", "kp:a", "ks:c", "kp:c", "rl:a"} {
		if has(f) {
			t.Errorf("the seed kept %s: %q", f, fields)
		}
	}
	for _, f := range []string{"rl:b", "rl:c", "ks:b", "kp:b", "bal", "bx", "ml"} {
		if !has(f) {
			t.Errorf("the mirror lacks %s: %q", f, fields)
		}
	}
}

// TestRedisLogMovesFromItsOwnKey: a key whose log an older gateway kept
// in a key of its own (":log") starts from that log, not anew.
func TestRedisLogMovesFromItsOwnKey(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now})
	ctx := context.Background()
	now := clock.Now().Sub(epoch2017).Seconds()
	var old []byte
	for _, at := range []float64{now - 10, now - 5} {
		old = binary.LittleEndian.AppendUint64(old, math.Float64bits(at))
	}
	if err := c.Set(ctx, r.logKey("acct", "k"), old, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	req := AdmitRequest{Key: "k", Account: "acct", Rate: Rate{Limit: 3, Period: time.Minute, Rolling: true},
		Reserve: Reservation{Account: "acct", Balance: 1000, Want: 1, Min: 1}}
	a, err := r.Admit(ctx, req)
	if err != nil || a.Rate.Remaining != 0 {
		t.Fatalf("the third admission in the window: %+v, %v", a, err)
	}
	a.Hold.Settle(0)
	if _, err := r.Admit(ctx, req); err == nil {
		t.Fatal("a fourth admission was admitted")
	}
	// The period, then three times.
	if n := len(c.HGet(ctx, r.balanceKey("acct"), "rl:k").Val()); n != 4*8 {
		t.Errorf("the log in the mirror holds %d bytes, want 32", n)
	}
}

// TestRedisDebitNeedsABalance: a debit of an account whose mirror holds
// a key's log and no balance makes no balance of the debit alone, and an
// unbilled admission's mirror expires.
func TestRedisDebitNeedsABalance(t *testing.T) {
	c := testRedisClient(t)
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)})
	ctx := context.Background()
	if _, err := r.Admit(ctx, AdmitRequest{Key: "k", Account: "acct", Rate: Rate{Limit: 3, Period: time.Minute, Rolling: true}}); err != nil {
		t.Fatal(err)
	}
	bal := r.balanceKey("acct")
	if ttl := c.PTTL(ctx, bal).Val(); ttl <= 59*time.Second || ttl > 61*time.Second {
		t.Errorf("the mirror of an unbilled admission expires in %v, want a minute and a second", ttl)
	}
	if err := r.Debit(ctx, "acct", 5); err != nil {
		t.Fatal(err)
	}
	if c.HExists(ctx, bal, "bal").Val() || c.HExists(ctx, bal, "base").Val() {
		t.Errorf("the debit made a balance: %v", c.HGetAll(ctx, bal).Val())
	}
}
