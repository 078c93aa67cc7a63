package limits

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// Reservations in the shared suite (runSuite), against Local and Redis.

func reserve(l Admitter, key string, ledger, want int64) (Admission, error) {
	return l.Admit(context.Background(), AdmitRequest{
		Key:     key,
		Rate:    Rate{Limit: 100, Period: time.Minute},
		Reserve: Reservation{Account: "acct", Balance: ledger, Want: want, Min: 1},
	})
}

func mustHold(t *testing.T, l Admitter, ledger, want, wantHeld int64) *Hold {
	t.Helper()
	a, err := reserve(l, "k", ledger, want)
	if err != nil {
		t.Fatalf("reserve %d of a %d balance: %v", want, ledger, err)
	}
	if a.Hold.Cents() != wantHeld || a.Hold.Account() != "acct" {
		t.Fatalf("reserve %d of a %d balance: held %d for %q, want %d", want, ledger, a.Hold.Cents(), a.Hold.Account(), wantHeld)
	}
	return a.Hold
}

// settled waits until the settlements of handed-over holds reached the
// limiter: Redis sends them a moment later, gathered.
func settled(l Admitter) {
	if r, ok := l.(*Redis); ok {
		r.Flush()
	}
}

func wantBalanceRefusal(t *testing.T, err error, available int64) {
	t.Helper()
	var be *BalanceError
	if !errors.As(err, &be) || be.Available != available || be.Min != 1 {
		t.Fatalf("got %v, want a balance refusal with %d cents available", err, available)
	}
	if ae := APIError(err); ae.Status != 402 || ae.Code != "insufficient_balance" {
		t.Fatalf("API error %d %s, want 402 insufficient_balance", ae.Status, ae.Code)
	}
}

func testReserveHoldsAndRefuses(t *testing.T, h harness) {
	l := h.node(t)
	mustHold(t, l, 10, 4, 4)
	mustHold(t, l, 10, 4, 4)
	mustHold(t, l, 10, 4, 2) // what is left, when it covers the minimum
	_, err := reserve(l, "k", 10, 4)
	wantBalanceRefusal(t, err, 0)
}

func testReserveRefusalConsumesNothing(t *testing.T, h harness) {
	l := h.node(t)
	req := AdmitRequest{
		Key: "k", Rate: Rate{Limit: 10, Period: time.Minute}, StreamLimit: 1, WantLease: true,
		Reserve: Reservation{Account: "acct", Balance: 0, Want: 5, Min: 1},
	}
	a, err := l.Admit(context.Background(), req)
	wantBalanceRefusal(t, err, 0)
	if a.Lease != nil || a.Hold != nil || a.Rate.Limit != 0 {
		t.Fatalf("a balance refusal returned %+v", a)
	}
	req.Reserve.Balance = 5 // topped up
	a, err = l.Admit(context.Background(), req)
	if err != nil {
		t.Fatalf("after a top-up: %v", err)
	}
	defer a.Lease.Release()
	defer a.Hold.Release()
	if a.Lease == nil || a.Hold.Cents() != 5 || a.Rate.Remaining != 9 {
		t.Fatalf("after a top-up: lease %v, held %d, %d requests remaining; want a lease, 5, 9",
			a.Lease, a.Hold.Cents(), a.Rate.Remaining)
	}
}

func testReserveRateRefusalHoldsNothing(t *testing.T, h harness) {
	l := h.node(t)
	req := AdmitRequest{Key: "limited", Rate: Rate{Limit: 1, Period: time.Minute},
		Reserve: Reservation{Account: "acct", Balance: 10, Want: 3}}
	first, err := l.Admit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Hold.Release()
	if _, err := l.Admit(context.Background(), req); !errors.As(err, new(*LimitError)) {
		t.Fatalf("second request: %v, want a rate refusal", err)
	}
	// Another key of the account sees only the first hold.
	mustHold(t, l, 10, 100, 7)
}

func testReserveSettle(t *testing.T, h harness) {
	l := h.node(t)
	hold := mustHold(t, l, 10, 6, 6)
	hold.Settle(3)
	hold.Settle(5) // only the first settlement counts
	hold.Release()
	// The ledger balance of a lookup made before the charge still says
	// 10; the mirror knows better.
	mustHold(t, l, 10, 100, 7)
}

func testReserveHandover(t *testing.T, h harness) {
	l := h.node(t)
	hold := mustHold(t, l, 10, 6, 6)
	settle := hold.Handover()
	// The handlers return and release what they hold: the hold stays, as
	// the charge is not committed yet.
	hold.Release()
	hold.Settle(1)
	mustHold(t, l, 10, 100, 4).Release() // 6 of the 10 still held
	// Committed: the hold goes, the mirror takes the charge.
	settle.Settle(3)
	settle.Settle(5)
	settled(l)
	mustHold(t, l, 10, 100, 7).Release()

	// Settled before the handover: nothing left to hand over.
	late := mustHold(t, l, 10, 1, 1)
	late.Release()
	late.Handover().Settle(1)
	settled(l)
	mustHold(t, l, 10, 100, 7)
	var none *Hold
	none.Handover().Settle(1)
}

func testReserveRelease(t *testing.T, h harness) {
	l := h.node(t)
	hold := mustHold(t, l, 10, 6, 6)
	hold.Release()
	hold.Settle(4) // too late: released without a charge
	var none *Hold
	none.Release()
	mustHold(t, l, 10, 100, 10)
}

func testReserveTopUp(t *testing.T, h harness) {
	l := h.node(t)
	hold := mustHold(t, l, 5, 5, 5)
	hold.Settle(5)
	_, err := reserve(l, "k", 5, 1) // a stale lookup: the mirror says 0
	wantBalanceRefusal(t, err, 0)
	// A top-up of 500 after the mirror took in 5: the ledger now says 500
	// and the mirror rises by what it gained.
	mustHold(t, l, 500, 1000, 495)
}

// A refund posted while a mirror is alive lowers it at once, on every
// node, instead of when the mirror expires; a later credit still counts
// whole.
func testReserveDebit(t *testing.T, h harness) {
	a, b := h.node(t), h.node(t)
	mustHold(t, a, 100, 10, 10).Settle(10) // the mirror: 90
	if err := b.(Debiter).Debit(context.Background(), "acct", 60); err != nil {
		t.Fatal(err)
	}
	// The ledger now says 30 (100 − 10 − 60). Without the debit the
	// mirror would still show 90 and hold it.
	mustHold(t, a, 30, 1000, 30).Release()
	// A credit of 20: the ledger says 50, 20 above the base the debit
	// left (40), so the mirror rises by 20 − 10 (the charge settled
	// since it was seeded, as without a debit): 40. Had the base stayed
	// at 100 the credit would not be seen at all.
	mustHold(t, a, 50, 1000, 40).Release()
	// An account with no mirror has nothing to lower.
	if err := b.(Debiter).Debit(context.Background(), "other", 5); err != nil {
		t.Fatal(err)
	}
}

func testReserveHoldExpires(t *testing.T, h harness) {
	crashed, survivor := h.node(t), h.node(t)
	a, err := reserve(crashed, "k", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	a.Hold.abandon() // no more renewals, nothing freed, as after a crash
	_, err = reserve(survivor, "k", 10, 1)
	wantBalanceRefusal(t, err, 0)
	h.clock.Advance(29 * time.Second)
	_, err = reserve(survivor, "k", 10, 1)
	wantBalanceRefusal(t, err, 0)
	wantHeld(t, crashed, 10)
	h.clock.Advance(time.Second)
	wantHeld(t, crashed, 0)
	mustHold(t, survivor, 10, 100, 10)
}

func wantHeld(t *testing.T, l HoldReporter, want int64) {
	t.Helper()
	if got, err := l.Held(context.Background(), "acct"); err != nil || got != want {
		t.Fatalf("Held = %d, %v; want %d", got, err, want)
	}
}

// testReserveHeld: what Held reports follows holds as they are taken,
// settled and released, on every node of a shared limiter.
func testReserveHeld(t *testing.T, h harness) {
	l := h.node(t)
	wantHeld(t, l, 0)
	a := mustHold(t, l, 100, 30, 30)
	b := mustHold(t, l, 100, 20, 20)
	wantHeld(t, l, 50)
	a.Settle(10)
	wantHeld(t, l, 20)
	b.Release()
	wantHeld(t, l, 0)
	if got, err := l.Held(context.Background(), "other"); err != nil || got != 0 {
		t.Fatalf("Held of an account without holds = %d, %v", got, err)
	}
}

func testReserveMirrorExpires(t *testing.T, h harness) {
	l := h.node(t)
	mustHold(t, l, 10, 2, 2).Settle(2)
	mustHold(t, l, 10, 100, 8).Release()
	h.clock.Advance(time.Minute)
	// Seeded again from the ledger, which by now has the charge.
	mustHold(t, l, 8, 100, 8).Release()
}

// testReserveConcurrent: however admissions interleave, on one node or
// several, what is held never exceeds the balance.
func testReserveConcurrent(t *testing.T, h harness) {
	nodes := []Limiter{h.node(t), h.node(t)}
	const balance, want, n = 20, 3, 50
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		held     int64
		holds    []*Hold
		refusals int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := reserve(nodes[i%len(nodes)], fmt.Sprint("k", i), balance, want)
			mu.Lock()
			defer mu.Unlock()
			if errors.As(err, new(*BalanceError)) {
				refusals++
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			held += a.Hold.Cents()
			holds = append(holds, a.Hold)
		}()
	}
	wg.Wait()
	// Six holds of 3 and one of the 2 left.
	if held != balance || len(holds) != 7 || refusals != n-7 {
		t.Fatalf("%d admitted holding %d, %d refused; want 7 holding %d, %d refused", len(holds), held, refusals, balance, n-7)
	}
	for _, hold := range holds {
		hold.Settle(1)
	}
	mustHold(t, nodes[0], balance, 100, balance-7)
}

// A check-only reservation refuses what a hold would refuse, and holds
// nothing when it admits: a hold asked for after it sees the whole
// balance.
func testReserveCheckOnly(t *testing.T, h harness) {
	l := h.node(t)
	check := AdmitRequest{Key: "checked", Rate: Rate{Limit: 10, Period: time.Minute},
		Reserve: Reservation{Account: "acct", Balance: 10, Want: 8, Min: 2, CheckOnly: true}}
	a, err := l.Admit(context.Background(), check)
	if err != nil {
		t.Fatal(err)
	}
	if a.Hold != nil || a.Rate.Remaining != 9 {
		t.Fatalf("a check admitted with hold %v, %d requests remaining; want none held, 9", a.Hold, a.Rate.Remaining)
	}
	wantHeld(t, l, 0)
	held := mustHold(t, l, 10, 9, 9)
	defer held.Release()

	// One cent is left, less than the minimum of two: refused, and the
	// refusal spends no rate.
	_, err = l.Admit(context.Background(), check)
	var be *BalanceError
	if !errors.As(err, &be) || be.Available != 1 || be.Min != 2 {
		t.Fatalf("a check with 1 cent available: %v, want a balance refusal", err)
	}
	check.Reserve.Min = 1
	if a, err = l.Admit(context.Background(), check); err != nil || a.Rate.Remaining != 8 {
		t.Fatalf("a check with the minimum available: %v, %d remaining; want admitted with 8", err, a.Rate.Remaining)
	}
	wantHeld(t, l, 9)
}

// handedSink keeps a Handed boxed, as the ledger writer's completion
// keeps it until the charge is committed.
var handedSink interface{ Settle(int64) }

// A hold handed over to its charge's completion is the hold itself in
// the completion's interface: no allocation a charge, where a function
// closing over the hold was one.
func TestHandoverAllocatesNothing(t *testing.T) {
	h := new(Hold)
	if n := testing.AllocsPerRun(100, func() { handedSink = h.Handover() }); n != 0 && !testenv.RaceEnabled {
		t.Errorf("a handover allocates %v objects, want none", n)
	}
	var none *Hold
	none.Handover().Settle(1) // must not panic
}
