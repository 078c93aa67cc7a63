package limits

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkRedisAdmitLatency is a lone node's admissions one at a time,
// as at one client, each with the settlement of the one before riding it
// (BenchmarkRedisAdmitHandover), interleaved with a bare PING over the
// same client. It reports both medians and their difference: what an
// admission adds to a round trip, in wall time. The admit and settle
// scripts' own time in Redis is part of it (INFO commandstats).
func BenchmarkRedisAdmitLatency(b *testing.B) {
	// Sent by the caller, as with a client that ends a call at its
	// context's deadline.
	b.Run("own", func(b *testing.B) { benchmarkRedisAdmitLatency(b, true) })
	// Handed to the sender, as with one that does not.
	b.Run("handed-over", func(b *testing.B) { benchmarkRedisAdmitLatency(b, false) })
}

func benchmarkRedisAdmitLatency(b *testing.B, own bool) {
	c := testRedisClient(b)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(b, c)})
	if err != nil {
		b.Fatal(err)
	}
	r.sendsOwn = own
	ctx := context.Background()
	req := AdmitRequest{Key: "key", Account: "acct", Rate: Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	var admits, pings []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		pings = append(pings, time.Since(start))
		start = time.Now()
		a, err := r.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		admits = append(admits, time.Since(start))
		a.Hold.Handover()(1)
		a.Hold.Release()
	}
	r.Flush()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Microsecond)
	}
	ap, pp := p50(admits), p50(pings)
	b.ReportMetric(ap, "admit-p50-µs")
	b.ReportMetric(pp, "ping-p50-µs")
	b.ReportMetric(ap-pp, "added-p50-µs")
}
