package limits

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisSlotAndHoldSetsLiveAsLongAsTheirLongestMember: the admit
// script gives the stream slots' and the holds' sets the expiry of their
// newest member and a second, never shortens a longer one (a member of
// another node's longer TTL), and gives one that lost its expiry an
// expiry again. Each admission here comes more than a second after the
// one before, so each extends the sets (within the second they already
// outlive the new member: TestRedisAdmissionExtendsExpiriesOnceASecond).
func TestRedisSlotAndHoldSetsLiveAsLongAsTheirLongestMember(t *testing.T) {
	c := testRedisClient(t)
	ttl := 20 * time.Second
	clock := newFakeClock()
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(t, c), LeaseTTL: ttl, Now: clock.Now})
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
	clock.Advance(1500 * time.Millisecond)
	admit() // both sets had members
	check("added to", ttl+time.Second)

	for _, key := range sets {
		if err := c.PExpire(ctx, key, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(1500 * time.Millisecond)
	admit()
	check("with a longer expiry", time.Hour)

	for _, key := range sets {
		if err := c.Persist(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(1500 * time.Millisecond)
	admit()
	check("without an expiry", ttl+time.Second)
}

// TestRedisAdmissionExtendsExpiriesOnceASecond: an admission of a billed
// stream (a rolling window kept as a log, a slot, a hold) within the
// second of the one before runs seven commands and extends no expiry:
// its log, its slots and its holds already outlive what it adds. The
// first admission of the next second extends all three.
func TestRedisAdmissionExtendsExpiriesOnceASecond(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	clock := newFakeClock()
	r := newTestRedis(t, RedisConfig{Client: c, Prefix: prefix, Now: clock.Now})
	ctx := context.Background()
	req := AdmitRequest{Key: "k", Account: "acct", Rate: Rate{Limit: 60, Period: time.Minute, Rolling: true},
		StreamLimit: 10, WantLease: true, Reserve: Reservation{Account: "acct", Balance: 1000, Want: 4, Min: 1}}
	admit := func() []string {
		t.Helper()
		return scriptCommands(t, c, prefix, func() {
			a, err := r.Admit(ctx, req)
			if err != nil || a.Lease == nil || a.Hold == nil || a.Fallback {
				t.Fatalf("admit: %+v, %v", a, err)
			}
			t.Cleanup(func() { a.Hold.Settle(0); a.Lease.Release() })
		})
	}
	names := func(cmds []string) string {
		var out []string
		for _, c := range cmds {
			name, _, _ := strings.Cut(c, " ")
			out = append(out, name)
		}
		return strings.Join(out, " ")
	}
	expired := func(cmds []string) map[string]bool {
		out := make(map[string]bool)
		for _, c := range cmds {
			if name, key, _ := strings.Cut(c, " "); name == "PEXPIRE" {
				out[key] = true
			}
		}
		return out
	}
	owner, _ := req.owner()
	keys := []string{r.logKey(owner, req.Key), r.leaseKey(owner, req.Key), r.holdsKey("acct")}

	first := expired(admit())
	for _, key := range keys {
		if !first[key] {
			t.Errorf("the first admission gave %s no expiry", key)
		}
	}
	clock.Advance(100 * time.Millisecond)
	if got, want := names(admit()), "HMGET GET ZCARD ZADD ZADD APPEND HSET"; got != want {
		t.Errorf("an admission within the second ran %s, want %s", got, want)
	}
	clock.Advance(time.Second)
	next := expired(admit())
	for _, key := range keys {
		if !next[key] {
			t.Errorf("the first admission of the next second did not extend %s", key)
		}
	}
}

// scriptCommands runs fn and returns the commands Redis ran from scripts
// on keys under prefix meanwhile, in order, as MONITOR shows them: each
// is its name and its first argument (the key).
func scriptCommands(t *testing.T, c *redis.Client, prefix string, fn func()) []string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", c.Options().Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	command := func(args ...string) {
		t.Helper()
		fmt.Fprintf(conn, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(conn, "$%d\r\n%s\r\n", len(a), a)
		}
		if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
			t.Fatalf("%s: %q, %v", args[0], line, err)
		}
	}
	switch o := c.Options(); {
	case o.Username != "":
		command("AUTH", o.Username, o.Password)
	case o.Password != "":
		command("AUTH", o.Password)
	}
	command("MONITOR")
	fn()
	marker := prefix + "monitor-end"
	if err := c.Echo(context.Background(), marker).Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, marker) {
			return out
		}
		_, ran, ok := strings.Cut(line, " lua] ")
		if f := strings.Fields(ran); ok && len(f) >= 2 && strings.Contains(f[1], prefix) {
			out = append(out, strings.Trim(f[0], `"`)+" "+strings.Trim(f[1], `"`))
		}
	}
}
