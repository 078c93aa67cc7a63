package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisHeldSumFollowsTheHolds: the sum of an account's holds, which
// the admission reads instead of adding up every hold in flight, stays
// equal to the holds through every way one comes and goes (admitted,
// settled, handed over, dropped after a lost answer, expired), and is
// counted again from the holds when it is lost.
func TestRedisHeldSumFollowsTheHolds(t *testing.T) {
	c := testRedisClient(t)
	clock := newFakeClock()
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c), Now: clock.Now, LeaseTTL: 30 * time.Second})
	ctx := context.Background()
	// sum is what Redis keeps; members what its holds add up to.
	check := func(when string) {
		t.Helper()
		l.Flush()
		sum, _ := c.HGet(ctx, l.balanceKey("acct"), "sum").Int64()
		members, err := l.Held(ctx, "acct")
		if err != nil {
			t.Fatal(err)
		}
		if sum != members {
			t.Fatalf("%s: the sum says %d held, the holds %d", when, sum, members)
		}
	}

	var holds []*Hold
	for range 10 {
		holds = append(holds, mustHold(t, l, 1000, 7, 7))
	}
	check("after 10 admissions")
	holds[0].Settle(5)
	holds[1].Release()
	holds[2].Handover().Settle(3)
	check("after a settle, a release and a handover")
	l.undoAdmit(AdmitRequest{Key: "k", Reserve: Reservation{Account: "acct", Want: 7}}, holds[3].id, nil)
	check("after dropping the hold of a lost answer")

	// Holds that stopped renewing expire; the next admission drops them.
	holds[4].abandon()
	holds[5].abandon()
	clock.Advance(20 * time.Second)
	for _, h := range holds[6:] {
		if kept, err := l.renew([]string{l.holdsKey("acct"), l.balanceKey("acct")}, h.id+"|7"); !kept || err != nil {
			t.Fatalf("renew: %v, %v", kept, err)
		}
	}
	clock.Advance(11 * time.Second)
	// The ledger (and the mirror) stand at 1000 less the charges of 5 and
	// 3; 4 holds of 7 are still in flight.
	mustHold(t, l, 992, 1000, 992-4*7).Release()
	check("after two holds expired")

	// A lost sum is counted again from the holds: with the mirror that
	// keeps it (expired, or evicted), or alone; and so is one that a
	// writer which does not keep it (an older gateway) left counting
	// other holds than there are.
	if err := c.HDel(ctx, l.balanceKey("acct"), "sum", "n").Err(); err != nil {
		t.Fatal(err)
	}
	mustHold(t, l, 992, 1000, 992-4*7).Release()
	check("after the sum was lost")
	if err := c.Del(ctx, l.balanceKey("acct")).Err(); err != nil {
		t.Fatal(err)
	}
	mustHold(t, l, 992, 992, 992-4*7).Release()
	check("after the mirror expired")
	// A hold the sum was not told of (a writer that does not keep it)
	// is counted once the admission looks at the holds again: when the
	// mirror's hint, the earliest expiry among the holds it last saw
	// (holds[6:], renewed 20 s in), has passed. Until then the sum is
	// trusted.
	renew := func() {
		t.Helper()
		for _, h := range holds[6:] {
			if kept, err := l.renew([]string{l.holdsKey("acct"), l.balanceKey("acct")}, h.id+"|7"); !kept || err != nil {
				t.Fatalf("renew: %v, %v", kept, err)
			}
		}
	}
	if err := c.ZAdd(ctx, l.holdsKey("acct"), redis.Z{Score: 1e12, Member: "older-gateway|50"}).Err(); err != nil {
		t.Fatal(err)
	}
	mustHold(t, l, 992, 1000, 992-4*7).Release()
	renew()
	clock.Advance(20 * time.Second)
	mustHold(t, l, 992, 1000, 992-4*7-50).Release()
	check("after a hold the sum was not told of")
	if err := c.ZRem(ctx, l.holdsKey("acct"), "older-gateway|50").Err(); err != nil {
		t.Fatal(err)
	}
	mustHold(t, l, 992, 1000, 992-4*7-50).Release()
	renew()
	clock.Advance(20 * time.Second)
	mustHold(t, l, 992, 1000, 992-4*7).Release()
	check("after that hold went as it came")
	for _, h := range holds[6:] {
		h.Release()
	}
	check("after every hold was released")
}

// TestRedisHoldMembersAndMirrorFields pins what the admission writes of
// a hold: its member ends in the cents held, whether that is all it
// wanted (the caller's own digits) or the balance left (formatted by the
// script), and the mirror takes in a credit when the ledger balance
// given rises, and nothing when it is the one taken in last.
func TestRedisHoldMembersAndMirrorFields(t *testing.T) {
	c := testRedisClient(t)
	l := newTestRedis(t, RedisConfig{Client: c, Prefix: testPrefix(t, c)})
	ctx := context.Background()
	admit := func(ledger, want int64) *Hold {
		t.Helper()
		a := mustAdmit(t, l, AdmitRequest{Key: "k", Reserve: Reservation{Account: "acct", Balance: ledger, Want: want, Min: 1}})
		return a.Hold
	}
	mirror := func() []any {
		t.Helper()
		v, err := c.HMGet(ctx, l.balanceKey("acct"), "bal", "base", "sum", "n").Result()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	all := admit(100, 40)     // seeds the mirror at 100, holds all 40
	rest := admit(100, 1000)  // the same ledger: holds the 60 left
	credit := admit(130, 500) // a credit of 30: holds it
	for _, h := range []struct {
		hold  *Hold
		cents int64
	}{{all, 40}, {rest, 60}, {credit, 30}} {
		if h.hold.Cents() != h.cents {
			t.Errorf("held %d, want %d", h.hold.Cents(), h.cents)
		}
		member := h.hold.id + "|" + strconv.FormatInt(h.cents, 10)
		if err := c.ZScore(ctx, l.holdsKey("acct"), member).Err(); err != nil {
			t.Errorf("member %q: %v", member, err)
		}
	}
	if got, want := fmt.Sprint(mirror()), "[130 130 130 3]"; got != want {
		t.Errorf("mirror bal, base, sum, n = %s, want %s", got, want)
	}
	_, err := l.Admit(ctx, AdmitRequest{Key: "k", Reserve: Reservation{Account: "acct", Balance: 130, Want: 1, Min: 1}})
	if be, ok := errors.AsType[*BalanceError](err); !ok || be.Available != 0 {
		t.Fatalf("with nothing left: %v, want a balance refusal with 0 available", err)
	}
}
