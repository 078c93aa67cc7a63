package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testAutoTopUp(t *testing.T) {
	autoTopUps := func(t *testing.T, s storage.Store) storage.AutoTopUps {
		t.Helper()
		a, ok := s.(storage.AutoTopUps)
		if !ok {
			t.Skipf("%T keeps no auto top-ups", s)
		}
		return a
	}
	const stale = 10 * time.Minute
	// ready is alice with $4 left, auto top-up on at $5 for $20, and a
	// saved card.
	ready := func(t *testing.T, s storage.Store, a storage.Account) storage.AutoTopUps {
		t.Helper()
		at := autoTopUps(t, s)
		mustPost(t, s, a.ID, 400, "t1")
		if _, err := at.SetAutoTopUpSettings(t.Context(), a.ID, true, 500, 2000); err != nil {
			t.Fatal(err)
		}
		if err := at.SaveAutoTopUpPaymentMethod(t.Context(), a.ID, "cus_1", "pm_1"); err != nil {
			t.Fatal(err)
		}
		return at
	}

	t.Run("OffByDefault", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		at := autoTopUps(t, s)
		got, err := at.AutoTopUp(t.Context(), a.ID)
		if err != nil || got.Enabled || got.AccountID != a.ID {
			t.Fatalf("AutoTopUp of a new account = %+v, %v; want off", got, err)
		}
		if err := at.SaveAutoTopUpPaymentMethod(t.Context(), a.ID, "cus_1", "pm_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, time.Now(), stale); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("ClaimAutoTopUp with auto top-up off = %v, want ErrNotFound", err)
		}
		if _, err := at.AutoTopUp(t.Context(), "acct_nobody"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("AutoTopUp of no account = %v, want ErrNotFound", err)
		}
		if _, err := at.SetAutoTopUpSettings(t.Context(), "acct_nobody", true, 1, 500); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("SetAutoTopUpSettings of no account = %v, want ErrNotFound", err)
		}
	})

	t.Run("OneAttemptInFlight", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		at := ready(t, s, a)
		now := time.Now()
		first, err := at.ClaimAutoTopUp(t.Context(), a.ID, now, stale)
		if err != nil {
			t.Fatal(err)
		}
		want := storage.AutoTopUpAttempt{AccountID: a.ID, Key: "autotopup:" + a.ID + ":1", AmountCents: 2000,
			CustomerID: "cus_1", PaymentMethodID: "pm_1"}
		if first != want {
			t.Fatalf("claim = %+v, want %+v", first, want)
		}
		if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, now.Add(time.Minute), stale); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("second claim while in flight = %v, want ErrNotFound", err)
		}
		// A claimer that died before asking the provider: the same key
		// again once stale.
		again, err := at.ClaimAutoTopUp(t.Context(), a.ID, now.Add(stale+time.Second), stale)
		if err != nil || again.Key != first.Key {
			t.Fatalf("claim of a stale attempt = %+v, %v; want the key %s again", again, err, first.Key)
		}
		// One with a payment at the provider is never stale: its events
		// end it.
		if err := at.SetAutoTopUpIntent(t.Context(), a.ID, first.Key, "pi_1"); err != nil {
			t.Fatal(err)
		}
		if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, now.Add(3*stale), stale); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("claim with a payment in flight = %v, want ErrNotFound", err)
		}
		res, err := at.FinishAutoTopUp(t.Context(), a.ID, first.Key, true, "", now, time.Hour)
		if err != nil || !res.Finished {
			t.Fatalf("FinishAutoTopUp = %+v, %v", res, err)
		}
		if res, err := at.FinishAutoTopUp(t.Context(), a.ID, first.Key, false, "late", now, time.Hour); err != nil || res.Finished {
			t.Fatalf("finishing it again = %+v, %v; want nothing done", res, err)
		}
		// Still below the threshold (the credit is the webhook's): the
		// next attempt has the next number.
		second, err := at.ClaimAutoTopUp(t.Context(), a.ID, now, stale)
		if err != nil || second.Key != "autotopup:"+a.ID+":2" {
			t.Fatalf("next claim = %+v, %v", second, err)
		}
		_, _ = at.FinishAutoTopUp(t.Context(), a.ID, second.Key, true, "", now, time.Hour)
		mustPost(t, s, a.ID, 2000, "t2") // $24: above
		if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, now, stale); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("claim above the threshold = %v, want ErrNotFound", err)
		}
		if due, err := at.DueAutoTopUps(t.Context(), now, stale, 10); err != nil || len(due) != 0 {
			t.Fatalf("DueAutoTopUps above the threshold = %v, %v", due, err)
		}
	})

	t.Run("FailuresDisableAndAlert", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		at := ready(t, s, a)
		if _, err := s.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: a.ID,
			WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "s3cret"}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for i := int64(1); i <= storage.AutoTopUpMaxFailures; i++ {
			if due, err := at.DueAutoTopUps(t.Context(), now, stale, 10); err != nil || len(due) != 1 || due[0] != a.ID {
				t.Fatalf("attempt %d: DueAutoTopUps = %v, %v; want alice", i, due, err)
			}
			c, err := at.ClaimAutoTopUp(t.Context(), a.ID, now, stale)
			if err != nil {
				t.Fatalf("attempt %d: %v", i, err)
			}
			res, err := at.FinishAutoTopUp(t.Context(), a.ID, c.Key, false, "card_declined", now, time.Hour)
			if err != nil || !res.Finished || res.Failures != i || res.Disabled != (i == storage.AutoTopUpMaxFailures) {
				t.Fatalf("failure %d = %+v, %v", i, res, err)
			}
			if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, now.Add(time.Minute), stale); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("claim right after failure %d = %v, want a wait", i, err)
			}
			now = now.Add(time.Hour)
		}
		got, err := at.AutoTopUp(t.Context(), a.ID)
		if err != nil || got.Enabled || got.Failures != storage.AutoTopUpMaxFailures || got.LastError != "card_declined" {
			t.Fatalf("after %d failures: %+v, %v; want off", storage.AutoTopUpMaxFailures, got, err)
		}
		if _, err := at.ClaimAutoTopUp(t.Context(), a.ID, now.Add(24*time.Hour), stale); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("claim when turned off = %v", err)
		}
		dels, err := s.AlertDeliveries(t.Context(), a.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range dels {
			if d.Kind == storage.AlertAutoTopUpFailed {
				n++
				if d.Detail != "card_declined" || d.LimitCents != 2000 || d.ThresholdCents != 500 || d.Failures < 1 {
					t.Errorf("delivery %+v", d)
				}
			}
		}
		if n != storage.AutoTopUpMaxFailures {
			t.Errorf("%d auto top-up alerts, want one per failure (%d)", n, storage.AutoTopUpMaxFailures)
		}
		// Turning it back on gives it its tries again.
		got, err = at.SetAutoTopUpSettings(t.Context(), a.ID, true, 500, 2000)
		if err != nil || !got.Enabled || got.Failures != 0 {
			t.Fatalf("re-enabled: %+v, %v", got, err)
		}
	})

	t.Run("ConcurrentClaimsOnTwoProcessesStartOne", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		ready(t, procs[0], a)
		errs := make([]error, 20)
		keys := make([]string, len(errs))
		now := time.Now()
		parallel(len(errs), func(i int) {
			var c storage.AutoTopUpAttempt
			c, errs[i] = autoTopUps(t, procs.pick(i)).ClaimAutoTopUp(t.Context(), a.ID, now, stale)
			keys[i] = c.Key
		})
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, storage.ErrNotFound):
				t.Errorf("claim %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of %d concurrent claims started an attempt, want 1 (%v)", won, len(errs), keys)
		}
	})
}
