package policy

import (
	"context"
	"testing"
)

// BenchmarkAuthenticate is the authenticator's own work on every request
// (bearer parsing, the keyed hash, the cache), over a store that answers
// from memory: a cache hit reads only the balance and key generation, or
// nothing where the store tells that nothing was committed since (the
// embedded store), a miss looks the key up. What the store's read costs
// is in storage/sqlite's BenchmarkKeyRead.
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	b.Run("cache hit, nothing committed", func(b *testing.B) {
		a, keys, key := newTestAuth(b, NewKeyCache(1000, nil))
		keys.tracked = true
		header := "Bearer " + key
		if _, err := a.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache hit", func(b *testing.B) {
		a, _, key := newTestAuth(b, NewKeyCache(1000, nil))
		header := "Bearer " + key
		if _, err := a.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache miss", func(b *testing.B) {
		a, keys, key := newTestAuth(b, NewKeyCache(1000, nil))
		header := "Bearer " + key
		b.ReportAllocs()
		for b.Loop() {
			keys.gen++ // a revocation elsewhere: every lookup misses
			if _, err := a.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no cache", func(b *testing.B) {
		a, _, key := newTestAuth(b, nil)
		header := "Bearer " + key
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPrice is the cost computation of every charge: the model's
// prices, then prompt and completion tokens priced and rounded.
func BenchmarkPrice(b *testing.B) {
	p := ProfileFor(RevisionB)
	b.ReportAllocs()
	var sink int64
	for i := 0; b.Loop(); i++ {
		sink += p.ForModel("svc-3").Price(int64(1000+i%7), int64(200+i%13))
	}
	_ = sink
}
