package storagetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testKeyControls(t *testing.T) {
	controls := storage.KeyControls{
		ExpiresAt:       time.Date(2031, 4, 1, 0, 0, 0, 0, time.UTC),
		Models:          []string{"svc-3", "gpt-4o-mini"},
		CIDRs:           []string{"203.0.113.0/24", "2001:db8::/32"},
		SpendLimitCents: 100,
		SpendPeriod:     storage.SpendPerDay,
		RatePerMinute:   30,
		StreamLimit:     2,
	}

	t.Run("CreateListLookup", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		hash := newHash()
		k, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: hash, Controls: controls})
		if err != nil {
			t.Fatal(err)
		}
		if !controlsEqual(k.Controls, controls) {
			t.Errorf("CreateKey controls = %+v, want %+v", k.Controls, controls)
		}
		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 1 || !controlsEqual(keys[0].Controls, controls) {
			t.Errorf("ListKeys = %+v, %v; want the controls %+v", keys, err, controls)
		}
		o, err := s.LookupKey(ctx, hash)
		if err != nil || !controlsEqual(o.Controls, controls) {
			t.Errorf("LookupKey = %+v, %v; want the controls %+v", o, err, controls)
		}
		// A key without controls reads back the zero value.
		plain, plainHash := mustKey(t, s, a.ID)
		o, err = s.LookupKey(ctx, plainHash)
		if err != nil || !reflect.DeepEqual(o.Controls, storage.KeyControls{}) || !reflect.DeepEqual(plain.Controls, storage.KeyControls{}) {
			t.Errorf("a key without controls: lookup %+v, %v", o.Controls, err)
		}
	})

	t.Run("SetRaisesGeneration", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		k, hash := mustKey(t, s, a.ID)
		before, err := s.LookupKey(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SetKeyControls(ctx, k.ID, controls)
		if err != nil || !controlsEqual(got.Controls, controls) {
			t.Fatalf("SetKeyControls = %+v, %v", got, err)
		}
		after, err := s.LookupKey(ctx, hash)
		if err != nil || after.KeyGeneration <= before.KeyGeneration || !controlsEqual(after.Controls, controls) {
			t.Errorf("after SetKeyControls: generation %d (before %d), controls %+v, %v",
				after.KeyGeneration, before.KeyGeneration, after.Controls, err)
		}
		if _, err := s.SetKeyControls(ctx, "key_unknown", controls); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("SetKeyControls(unknown) = %v, want ErrNotFound", err)
		}
		if _, err := s.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetKeyControls(ctx, k.ID, controls); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("SetKeyControls(revoked) = %v, want ErrNotFound", err)
		}
	})

	t.Run("PeriodSpendAndLastUsed", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		mustPost(t, s, a.ID, 10_000, "topup")
		daily, dailyHash := mustKeyWith(t, s, a.ID, storage.KeyControls{SpendLimitCents: 500, SpendPeriod: storage.SpendPerDay})
		monthly, monthlyHash := mustKeyWith(t, s, a.ID, storage.KeyControls{SpendLimitCents: 500, SpendPeriod: storage.SpendPerMonth})
		_, otherHash := mustKey(t, s, a.ID)

		used := c.Advance(time.Second)
		mustSettle(t, s, storage.UsageRecord{AccountID: a.ID, KeyID: daily.ID, RequestID: "r1", CostCents: 7, Started: used, Finished: used})
		if _, err := s.SettleUsageBatch(ctx, []storage.UsageRecord{
			{AccountID: a.ID, KeyID: daily.ID, RequestID: "r2", CostCents: 5, Started: used, Finished: used},
			{AccountID: a.ID, KeyID: monthly.ID, RequestID: "r3", CostCents: 11, Started: used, Finished: used},
		}); err != nil {
			t.Fatal(err)
		}
		wantSpend(t, s, dailyHash, 12)
		wantSpend(t, s, monthlyHash, 11)
		wantSpend(t, s, otherHash, 0) // no limit: nothing summed

		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			switch k.ID {
			case daily.ID, monthly.ID:
				if !k.LastUsedAt.Equal(used) {
					t.Errorf("key %s LastUsedAt = %v, want %v", k.ID, k.LastUsedAt, used)
				}
			default:
				if !k.LastUsedAt.IsZero() {
					t.Errorf("an unused key has LastUsedAt %v", k.LastUsedAt)
				}
			}
		}

		// The next day (UTC) starts the daily key's period afresh; the
		// month goes on.
		c.Set(storage.SpendPerDay.Start(used).Add(24 * time.Hour))
		wantSpend(t, s, dailyHash, 0)
		wantSpend(t, s, monthlyHash, 11)
	})
}

func mustKeyWith(t *testing.T, s storage.Store, accountID string, c storage.KeyControls) (storage.APIKey, string) {
	t.Helper()
	hash := newHash()
	k, err := s.CreateKey(t.Context(), storage.NewKey{AccountID: accountID, Hash: hash, Controls: c})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	return k, hash
}

func wantSpend(t *testing.T, s storage.Store, hash string, want int64) {
	t.Helper()
	if o, err := s.LookupKey(t.Context(), hash); err != nil || o.PeriodSpendCents != want {
		t.Errorf("LookupKey period spend = %d, %v; want %d", o.PeriodSpendCents, err, want)
	} else if o.Controls.SpendLimitCents > 0 && o.Period == "" {
		t.Errorf("LookupKey of a key with a spend limit names no period")
	}
}

func controlsEqual(a, b storage.KeyControls) bool {
	return a.ExpiresAt.Equal(b.ExpiresAt) && slicesEqual(a.Models, b.Models) && slicesEqual(a.CIDRs, b.CIDRs) &&
		a.SpendLimitCents == b.SpendLimitCents && a.SpendPeriod == b.SpendPeriod &&
		a.RatePerMinute == b.RatePerMinute && a.StreamLimit == b.StreamLimit
}

func slicesEqual(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}
