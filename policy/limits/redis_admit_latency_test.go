package limits

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkRedisAdmitLatency is a lone node's admissions one at a time,
// as at one client, each with the settlement of the one before riding it
// (BenchmarkRedisAdmitHandover), next to a bare PING over the same
// client. It reports the medians of both and of their difference, what
// an admission adds to a round trip in wall time, for an admission its
// caller sends (a client that ends calls at their deadline) and one
// handed to the sender (a client that does not), taken in turns so that
// both see the same moments of a busy machine. The admit and settle
// scripts' time in Redis is part of it: script-µs is Redis's own
// figure (INFO commandstats) per admission.
func BenchmarkRedisAdmitLatency(b *testing.B) {
	c := testRedisClient(b)
	prefix := testPrefix(b, c)
	var ls [2]*Redis
	for i := range ls {
		r, err := NewRedis(RedisConfig{Client: c, Prefix: prefix + strconv.Itoa(i) + ":"})
		if err != nil {
			b.Fatal(err)
		}
		r.sendsOwn = i == 0
		ls[i] = r
	}
	ctx := context.Background()
	req := AdmitRequest{Key: "key", Account: "acct", Rate: Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	var pings []time.Duration
	var admits, added [2][]time.Duration
	admit := func(i int) {
		start := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		ping := time.Since(start)
		start = time.Now()
		a, err := ls[i].Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		pings = append(pings, ping)
		admits[i] = append(admits[i], took)
		added[i] = append(added[i], took-ping)
		a.Hold.Handover().Settle(1)
		a.Hold.Release()
	}
	scripts := evalshaMicros(b, c)
	b.ReportAllocs()
	for b.Loop() {
		admit(0)
		admit(1)
	}
	scripts = evalshaMicros(b, c) - scripts
	for _, r := range ls {
		r.Flush()
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Microsecond)
	}
	b.ReportMetric(p50(pings), "ping-µs")
	b.ReportMetric(p50(admits[0]), "own-µs")
	b.ReportMetric(p50(added[0]), "own-added-µs")
	b.ReportMetric(p50(admits[1]), "handed-µs")
	b.ReportMetric(p50(added[1]), "handed-added-µs")
	b.ReportMetric(scripts/float64(2*b.N), "script-µs")
}

var evalshaStats = regexp.MustCompile(`cmdstat_evalsha:calls=\d+,usec=(\d+)`)

// evalshaMicros is the time Redis has spent in EVALSHA, all clients'.
func evalshaMicros(b *testing.B, c *redis.Client) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	m := evalshaStats.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	us, _ := strconv.ParseFloat(m[1], 64)
	return us
}
