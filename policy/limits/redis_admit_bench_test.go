package limits

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRedisAdmitHandover is a billed /v1 JSON request on one node as
// the gateway runs it: one admission with a rolling rate and a hold,
// whose settlement (Hold.Handover, called when the ledger commits the
// charge) is gathered and rides the next admission's pipeline. The
// figure to watch is allocs/op: the gateway's own work per request
// around its one round trip.
func BenchmarkRedisAdmitHandover(b *testing.B) {
	c := testRedisClient(b)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(b, c)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := AdmitRequest{Key: "key", Account: "acct", Rate: Rate{Limit: 256, Period: 10 * time.Millisecond, Rolling: true},
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	b.ReportAllocs()
	for b.Loop() {
		a, err := r.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		a.Hold.Handover()(1)
		a.Hold.Release()
	}
	r.Flush()
}
