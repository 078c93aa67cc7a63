package limits

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// rateKinds are revision B's limit as GCRA ("rate") and as the rolling
// window (its default), for comparing their cost.
var rateKinds = []struct {
	name string
	rate Rate
}{
	{"gcra", Rate{Limit: 60, Period: time.Minute, Burst: 60}},
	{"rolling", Rate{Limit: 60, Period: time.Minute, Rolling: true}},
}

// benchmarkAdmit admits one request a second on one key: every request
// is admitted and, once warm, the rolling window holds its full 60
// entries, the most it ever holds.
func benchmarkAdmit(b *testing.B, newLimiter func(now func() time.Time) Limiter) {
	runs := 0
	for _, kind := range rateKinds {
		b.Run(kind.name, func(b *testing.B) {
			// -count runs this again on the same store with the clock
			// back at its start: a key of its own keeps runs apart.
			runs++
			clock := newFakeClock()
			l := newLimiter(clock.Now)
			ctx := context.Background()
			req := AdmitRequest{Key: fmt.Sprint(kind.name, runs), Rate: kind.rate}
			b.ReportAllocs()
			for b.Loop() {
				clock.Advance(time.Second)
				if _, err := l.Admit(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLocalAdmit(b *testing.B) {
	benchmarkAdmit(b, func(now func() time.Time) Limiter {
		return NewLocal(LocalConfig{Now: now})
	})
}

// BenchmarkRedisAdmit: one run of the admit script per request, on the
// test Redis.
func BenchmarkRedisAdmit(b *testing.B) {
	c := testRedisClient(b)
	prefix := testPrefix(b, c)
	benchmarkAdmit(b, func(now func() time.Time) Limiter {
		r, err := NewRedis(RedisConfig{Client: c, Prefix: prefix, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		return r
	})
}
