package limits

import (
	"context"
	"testing"
	"time"
)

// BenchmarkLocalAdmitWithReservation: an admission that checks a rate and
// holds money, then settles, as every billed request does on one node.
func BenchmarkLocalAdmitWithReservation(b *testing.B) {
	l := NewLocal(LocalConfig{})
	req := AdmitRequest{Key: "k", Rate: Rate{Limit: 1 << 30, Period: time.Second},
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a, err := l.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		a.Hold.Settle(1)
	}
}

// BenchmarkLocalAdmitStream: the admission of a billed stream, its slot
// tied to the request's context, then its settlement and release, as
// every billed stream does on one node.
func BenchmarkLocalAdmitStream(b *testing.B) {
	l := NewLocal(LocalConfig{})
	req := AdmitRequest{Key: "k", Rate: Rate{Limit: 1 << 30, Period: time.Second}, StreamLimit: 1 << 20, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 1 << 40, Want: 4, Min: 1}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		a, err := l.Admit(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		a.Hold.Settle(1)
		a.Lease.Release()
	}
}
