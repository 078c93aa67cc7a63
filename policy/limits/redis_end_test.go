package limits

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// connSetup tells the commands that set up a new connection (HELLO,
// CLIENT), which are no round trip of a request.
func connSetup(cmd redis.Cmder) bool { return cmd.Name() == "hello" || cmd.Name() == "client" }

// TestRedisStreamEndsInOneRoundTrip pins that a stream admitted with a
// hold, settled and then released as the gateway does, costs one round
// trip at its end when nothing else is sent within the gather time, and
// that both take effect: the slot is free, the hold gone and the mirror
// lowered by the charge. Released first, each ends on its own.
func TestRedisStreamEndsInOneRoundTrip(t *testing.T) {
	l, hook := countedRedis(t, func(cmd redis.Cmder) bool { return !connSetup(cmd) })
	ctx := context.Background()
	// Load the settle script, as any earlier request would have.
	warm, err := l.Admit(ctx, AdmitRequest{Key: "warm", Reserve: Reservation{Account: "warm", Balance: 10, Want: 1}})
	if err != nil {
		t.Fatal(err)
	}
	warm.Hold.Settle(0)
	req := billedStream()
	a := mustAdmit(t, l, req)
	before := hook.n.Load()
	a.Hold.Settle(7)
	if n := hook.n.Load() - before; n != 0 {
		t.Fatalf("settling while the slot is held took %d round trips, want 0 until the release", n)
	}
	a.Lease.Release()
	a.Hold.Release()
	l.Flush()
	if n := hook.n.Load() - before; n != 1 {
		t.Fatalf("the stream's end took %d round trips, want 1", n)
	}
	// The slot is free and the balance is 100 - 7, nothing held.
	b, err := l.Admit(ctx, AdmitRequest{Key: "k", Rate: req.Rate, StreamLimit: 1, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 100, Want: 1000, Min: 1}})
	if err != nil {
		t.Fatalf("after the end: %v", err)
	}
	if b.Hold.Cents() != 93 {
		t.Errorf("held %d after the end, want the 93 left", b.Hold.Cents())
	}

	// The other order: released first, then settled, each on its own.
	before = hook.n.Load()
	b.Lease.Release()
	b.Hold.Settle(3)
	l.Flush()
	if n := hook.n.Load() - before; n != 2 {
		t.Fatalf("release then settle took %d round trips, want 2", n)
	}
	_, err = l.Admit(ctx, AdmitRequest{Key: "k", Rate: req.Rate, Reserve: Reservation{Account: "acct", Balance: 100, Want: 1000, Min: 91}})
	var be *BalanceError
	if !errors.As(err, &be) || be.Available != 90 {
		t.Fatalf("after settling 3 of 93: %v, want 90 available", err)
	}
}

// TestRedisReleasesRideTheNextAdmission pins that a stream's end sent no
// round trip of its own when the node admits the next request before the
// gather time is up: the release goes ahead of the admit script in its
// pipeline, so the freed slot and money are free for that very admission.
func TestRedisReleasesRideTheNextAdmission(t *testing.T) {
	l, hook := countedRedis(t, func(cmd redis.Cmder) bool { return !connSetup(cmd) })
	l.releases.gather = time.Hour // only an admission sends them
	ctx := context.Background()
	req := billedStream()
	a := mustAdmit(t, l, req)
	before := hook.n.Load()
	// As the gateway ends a stream: the hold is handed over to the ledger
	// writer, settled with the charge once it is committed, and the slot
	// released as the handlers return.
	a.Hold.Handover().Settle(7)
	a.Lease.Release()
	if n := hook.n.Load() - before; n != 0 {
		t.Fatalf("the stream's end took %d round trips before the next admission, want 0", n)
	}

	req.Reserve.Want = 1000
	b, err := l.Admit(ctx, req)
	if err != nil {
		t.Fatalf("the next stream on the one slot: %v", err)
	}
	if n := hook.n.Load() - before; n != 1 {
		t.Errorf("the end and the next admission took %d round trips, want 1", n)
	}
	if b.Hold.Cents() != 93 {
		t.Errorf("the next admission held %d, want the 93 left after the charge of 7", b.Hold.Cents())
	}
	b.Lease.Release()
	b.Hold.Release()

	flushed := make(chan struct{})
	go func() { l.Flush(); close(flushed) }()
	req.Reserve = Reservation{}
	if _, err := l.Admit(ctx, req); err != nil {
		t.Fatalf("after the second stream's end: %v", err)
	}
	select {
	case <-flushed:
	case <-time.After(5 * time.Second):
		t.Fatal("Flush still waits for releases an admission sent")
	}
}

// billedStream is a stream's admission as the gateway asks for it: a
// rate, the key's one slot and a hold of 10 of the account's 100 cents.
func billedStream() AdmitRequest {
	return AdmitRequest{Key: "k", Rate: Rate{Limit: 1000, Period: time.Minute}, StreamLimit: 1, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 100, Want: 10, Min: 1}}
}

func mustAdmit(t *testing.T, l Admitter, req AdmitRequest) Admission {
	t.Helper()
	a, err := l.Admit(context.Background(), req)
	if err != nil {
		t.Fatalf("admitting %+v: %v", req, err)
	}
	return a
}
