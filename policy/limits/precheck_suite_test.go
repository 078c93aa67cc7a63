package limits

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Precheck in the shared suite (runSuite), against Local and Redis: what
// both know without a round trip.

// testPrecheckBalance: a ledger balance below the minimum is refused
// before anything is asked, and a check holds and spends nothing.
func testPrecheckBalance(t *testing.T, h harness) {
	l := h.node(t)
	req := AdmitRequest{Key: "k", Rate: Rate{Limit: 10, Period: time.Minute},
		Reserve: Reservation{Account: "acct", Balance: 0, Min: 1, CheckOnly: true}}
	a, err := l.Precheck(req)
	var be *BalanceError
	if !errors.As(err, &be) || be.Available != 0 || be.Min != 1 {
		t.Fatalf("a zero balance: %v, want a balance refusal", err)
	}
	if a.Rate.Limit != 0 {
		t.Errorf("a balance refusal reported a rate: %+v", a.Rate)
	}
	req.Reserve.Balance = 10
	for range 20 {
		if _, err := l.Precheck(req); err != nil {
			t.Fatalf("10 cents: %v", err)
		}
	}
	// Twenty checks spent none of the rate and held nothing.
	adm, err := l.Admit(context.Background(), AdmitRequest{Key: "k", Rate: req.Rate,
		Reserve: Reservation{Account: "acct", Balance: 10, Want: 10, Min: 1}})
	if err != nil || adm.Rate.Remaining != 9 || adm.Hold.Cents() != 10 {
		t.Fatalf("after the checks: %v, %d remaining, %d held; want 9 remaining and all 10 held", err, adm.Rate.Remaining, adm.Hold.Cents())
	}
	adm.Hold.Release()
}

// testPrecheckKnownSpentRate: once an admission showed the key's rate
// spent, Precheck refuses it, with the time until the next admission,
// until that time; and never refuses what Admit would admit.
func testPrecheckKnownSpentRate(t *testing.T, h harness) {
	for _, rate := range []Rate{
		{Limit: 3, Period: time.Minute, Rolling: true},
		{Limit: 3, Period: time.Minute}, // GCRA, burst 3: one every 20s after the burst
	} {
		name := map[bool]string{true: "rolling", false: "GCRA"}[rate.Rolling]
		t.Run(name, func(t *testing.T) {
			l := h.node(t)
			key := "spent-" + name
			req := AdmitRequest{Key: key, Rate: rate}
			ctx := context.Background()
			wantRetry := time.Minute // rolling: until the first of the three leaves the window
			if !rate.Rolling {
				wantRetry = 20 * time.Second // GCRA: one emission interval
			}
			for i := range 3 {
				if _, err := l.Precheck(req); err != nil {
					t.Fatalf("before admission %d: %v", i+1, err)
				}
				if _, err := l.Admit(ctx, req); err != nil {
					t.Fatalf("admission %d: %v", i+1, err)
				}
				h.clock.Advance(time.Second)
			}
			// Nothing remains; the next admission comes when the first
			// leaves the window (rolling) or after one interval (GCRA).
			wantRetry -= 3 * time.Second
			if _, err := l.Precheck(AdmitRequest{Key: "other", Rate: rate}); err != nil {
				t.Fatalf("another key: %v", err)
			}
			a, err := l.Precheck(req)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != LimitRequests || !near(a.Rate.RetryAfter, wantRetry) || a.Rate.Limit != 3 || a.Rate.Remaining != 0 {
				t.Fatalf("with the rate spent: %+v, %v; want a rate refusal, retry after %v", a.Rate, err, wantRetry)
			}
			// Admit agrees.
			if _, err := l.Admit(ctx, req); !errors.As(err, &le) {
				t.Fatalf("Admit with the rate spent: %v", err)
			}
			h.clock.Advance(wantRetry - 10*time.Millisecond)
			if _, err := l.Precheck(req); !errors.As(err, &le) {
				t.Fatalf("just before the retry time: %v, want still refused", err)
			}
			h.clock.Advance(20 * time.Millisecond)
			if _, err := l.Precheck(req); err != nil {
				t.Fatalf("at the retry time: %v, want no refusal", err)
			}
			if _, err := l.Admit(ctx, req); err != nil {
				t.Fatalf("Admit at the retry time: %v", err)
			}
		})
	}
}
