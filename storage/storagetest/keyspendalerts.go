package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testKeySpendAlerts(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	setUp := func(t *testing.T, s storage.Store, a storage.Account, percent *int64) {
		t.Helper()
		got, err := s.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: a.ID, KeySpendPercent: percent,
			WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "s3cret", Email: "ops@example.com"})
		if err != nil || !equalPtr(got.KeySpendPercent, percent) {
			t.Fatalf("SetAlertSettings = %+v, %v; want key spend percent %v", got, err, percent)
		}
	}
	keyDeliveries := func(t *testing.T, s storage.Store, a storage.Account) []storage.AlertDelivery {
		t.Helper()
		all, err := s.AlertDeliveries(t.Context(), a.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []storage.AlertDelivery
		for _, d := range all {
			if d.Kind == storage.AlertKeySpend {
				out = append(out, d)
			}
		}
		return out
	}
	seq := 0
	batch := func(t *testing.T, s storage.Store, a storage.Account, keyID string, at time.Time, cents ...int64) {
		t.Helper()
		var records []storage.UsageRecord
		for _, c := range cents {
			seq++
			records = append(records, storage.UsageRecord{AccountID: a.ID, KeyID: keyID, RequestID: fmt.Sprintf("r%d", seq),
				CostCents: c, Started: at, Finished: at})
		}
		out, err := s.SettleUsageBatch(t.Context(), records)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
		}
	}

	t.Run("OncePerPeriodAgainNextPeriod", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		mustPost(t, s, a.ID, 10_000, "topup")
		setUp(t, s, a, i64(80))
		k, _ := mustKeyWith(t, s, a.ID, storage.KeyControls{SpendLimitCents: 100, SpendPeriod: storage.SpendPerDay})
		_, _ = mustKeyWith(t, s, a.ID, storage.KeyControls{}) // no limit: never alerts

		now := c.Advance(time.Second)
		batch(t, s, a, k.ID, now, 30, 30) // 60 of 100
		if d := keyDeliveries(t, s, a); len(d) != 0 {
			t.Fatalf("60 of 100 at 80%%: %d deliveries", len(d))
		}
		batch(t, s, a, k.ID, now, 15, 10) // 85: crossed
		batch(t, s, a, k.ID, now, 5)      // 90: still past
		mustSettle(t, s, storage.UsageRecord{AccountID: a.ID, KeyID: k.ID, RequestID: "single", CostCents: 1, Started: now, Finished: now})
		d := keyDeliveries(t, s, a)
		if len(d) != 2 {
			t.Fatalf("one crossing queued %d key spend deliveries, want 2 (webhook and email): %+v", len(d), d)
		}
		for _, x := range d {
			if x.KeyID != k.ID || x.SpendCents != 85 || x.LimitCents != 100 || x.ThresholdCents != 80 ||
				x.SpendPeriod != storage.SpendPerDay || x.Status != storage.AlertPending {
				t.Errorf("delivery %+v: want key %s, spend 85 of 100, threshold 80, day, pending", x, k.ID)
			}
		}

		// The next UTC day counts afresh and may alert again, once.
		next := storage.SpendPerDay.Start(now).Add(24*time.Hour + time.Minute)
		c.Set(next)
		batch(t, s, a, k.ID, next, 50)
		if d := keyDeliveries(t, s, a); len(d) != 2 {
			t.Fatalf("50 of 100 in the next day: %d deliveries, want still 2", len(d))
		}
		batch(t, s, a, k.ID, next, 30, 30)
		batch(t, s, a, k.ID, next, 1)
		if d := keyDeliveries(t, s, a); len(d) != 4 {
			t.Fatalf("the next day's crossing: %d deliveries, want 4", len(d))
		}
	})

	t.Run("SavingSettingsRearms", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		mustPost(t, s, a.ID, 10_000, "topup")
		setUp(t, s, a, i64(50))
		k, _ := mustKeyWith(t, s, a.ID, storage.KeyControls{SpendLimitCents: 100, SpendPeriod: storage.SpendPerMonth})
		now := c.Advance(time.Second)
		batch(t, s, a, k.ID, now, 60)
		setUp(t, s, a, i64(90))
		batch(t, s, a, k.ID, now, 10) // 70 of 100 at 90%: armed, not reached
		if d := keyDeliveries(t, s, a); len(d) != 2 {
			t.Fatalf("after re-arming under the new share: %d deliveries, want 2", len(d))
		}
		batch(t, s, a, k.ID, now, 20) // 90: reached the new share
		if d := keyDeliveries(t, s, a); len(d) != 4 {
			t.Fatalf("crossing the new share: %d deliveries, want 4", len(d))
		}
		setUp(t, s, a, nil) // off
		batch(t, s, a, k.ID, now, 5)
		if d := keyDeliveries(t, s, a); len(d) != 4 {
			t.Fatalf("with key spend alerts off: %d deliveries, want 4", len(d))
		}
	})

	t.Run("ConcurrentBatchesOnTwoProcessesFireOnce", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		mustPost(t, procs[0], a.ID, 10_000, "t1")
		setUp(t, procs[0], a, i64(80))
		k, _ := mustKeyWith(t, procs[0], a.ID, storage.KeyControls{SpendLimitCents: 1000, SpendPeriod: storage.SpendPerDay})
		errs := make([]error, 40)
		now := time.Now()
		parallel(len(errs), func(i int) {
			_, errs[i] = procs.pick(i).SettleUsageBatch(t.Context(), []storage.UsageRecord{
				{AccountID: a.ID, KeyID: k.ID, RequestID: fmt.Sprintf("c%d", i), CostCents: 25, Started: now, Finished: now}})
		})
		checkErrs(t, "SettleUsageBatch", errs)
		if d := keyDeliveries(t, procs[1], a); len(d) != 2 {
			t.Errorf("40 concurrent charges crossing once: %d key spend deliveries, want 2", len(d))
		}
	})
}

func equalPtr(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
