package limits

import (
	"context"
	"runtime"
	"slices"
	"testing"
)

// heldStreams is how many streams BenchmarkRedisHeldStreams holds open.
const heldStreams = 500

// BenchmarkRedisHeldStreams is what an open billed stream keeps in the
// process on Redis, and what renewing it costs: heldStreams admissions
// with a stream slot and a hold, with ids of the gateway's lengths, then
// b.N rounds of renewing every lease and hold they keep, as the
// renewals' goroutine does at each tick. It reports the live heap and
// the bytes allocated per admitted stream (after a collection, so what
// the admission left to the collector is in alloc-B/stream only), and
// the allocations and bytes of one renewal.
//
//	go test ./policy/limits -run '^$' -bench RedisHeldStreams -benchtime 100x
func BenchmarkRedisHeldStreams(b *testing.B) {
	c := testRedisClient(b)
	r, err := NewRedis(RedisConfig{Client: c, Prefix: testPrefix(b, c)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The gateway's ids: "key_" and "acct_" and 22 characters.
	req := AdmitRequest{Key: "key_0123456789abcdefghijkl", StreamLimit: heldStreams + 1, WantLease: true,
		Reserve: Reservation{Account: "acct_0123456789abcdefghijkl", Balance: 1 << 40, Want: 40, Min: 1}}
	warm, err := r.Admit(ctx, req) // loads the script
	if err != nil {
		b.Fatal(err)
	}
	warm.Hold.Release()
	warm.Lease.Release()
	r.Flush()

	before := heapNow()
	held := make([]Admission, 0, heldStreams)
	for range heldStreams {
		a, err := r.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, a)
	}
	after := heapNow()
	defer func() {
		for _, a := range held {
			a.Hold.Release()
			a.Lease.Release()
		}
		r.Flush()
	}()

	q := &r.renewals
	q.mu.Lock()
	var live []*renewal
	for x := q.live.next; x != &q.live; x = x.next {
		live = append(live, x)
	}
	q.mu.Unlock()
	if len(live) != 2*heldStreams {
		b.Fatalf("%d renewals for %d streams with a slot and a hold", len(live), heldStreams)
	}
	// The first round loads the renew script, which a pipeline of
	// EVALSHAs cannot.
	for tries := 0; !q.renew(live[:1]); tries++ {
		if tries == 3 {
			b.Fatal("renewals fail")
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for b.Loop() {
		for batch := range slices.Chunk(live, maxRenewPipeline) {
			if !q.renew(batch) {
				b.Fatal("a renewal round trip failed")
			}
		}
	}
	runtime.ReadMemStats(&m1)
	renewals := float64(b.N * len(live))
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/renewals, "allocs/renewal")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/renewals, "B/renewal")
	// After the loop: b.Loop's start drops the metrics reported before.
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/heldStreams, "live-B/stream")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/heldStreams, "alloc-B/stream")
}

// heapNow is the live heap after a collection, and the bytes allocated
// so far.
func heapNow() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
