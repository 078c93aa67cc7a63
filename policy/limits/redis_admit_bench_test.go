package limits

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRedisAdmitHandover is a billed /v1 JSON request on one node as
// the gateway runs it: one admission with a rolling rate and a hold,
// whose settlement (Hold.Handover, called when the ledger commits the
// charge) is gathered and rides the next admission's pipeline. The
// figure to watch is allocs/op: the gateway's own work per request
// around its one round trip. Rate 256 per 10 ms: neither refuses.
func BenchmarkRedisAdmitHandover(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchmarkRedisAdmitHandover(b, false) })
	// 32 at once, as the bench's clients: admissions share pipelines.
	b.Run("c32", func(b *testing.B) { benchmarkRedisAdmitHandover(b, true) })
}

func benchmarkRedisAdmitHandover(b *testing.B, parallel bool) {
	c := testRedisClient(b)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(b, c)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := AdmitRequest{Key: "key", Account: "acct", Rate: Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	admit := func(req AdmitRequest) bool {
		a, err := r.Admit(ctx, req)
		if err != nil {
			b.Error(err)
			return false
		}
		a.Hold.Handover().Settle(1)
		a.Hold.Release()
		return true
	}
	b.ReportAllocs()
	if parallel {
		// A key of each client's own, as a rate refuses beyond 25,600
		// requests a second.
		var clients atomic.Int64
		b.SetParallelism(32 / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			req := req
			req.Key = fmt.Sprint("key", clients.Add(1))
			for pb.Next() && admit(req) {
			}
		})
	} else {
		for b.Loop() && admit(req) {
		}
	}
	r.Flush()
}
