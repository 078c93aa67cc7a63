package storage_test

import (
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/storage"
)

// keySim keeps a key's spend alert as the store does: the spend counts
// the current period, the alert remembers the period it fired in.
type keySim struct {
	clock  *fakeclock.Clock
	period storage.SpendPeriod
	state  storage.KeySpendState
	fired  int
}

func (k *keySim) charge(cents, percent int64) {
	start := k.period.Start(k.clock.Now())
	if !start.Equal(k.state.PeriodStart) {
		k.state.PeriodStart, k.state.SpendCents = start, 0
	}
	k.state.SpendCents += cents
	p := percent
	fire, rearm := storage.KeySpendDecision(k.state, &p)
	switch {
	case fire:
		k.state.FiredFor = start
		k.fired++
	case rearm:
		k.state.FiredFor = time.Time{}
	}
}

func TestKeySpendAlertOncePerPeriod(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC))
	k := &keySim{clock: clock, period: storage.SpendPerDay, state: storage.KeySpendState{LimitCents: 100}}
	for i, want := range []int{0, 0, 1, 1, 1} { // 30, 60, 90 (80% reached), 120, 150
		k.charge(30, 80)
		if k.fired != want {
			t.Fatalf("charge %d (spend %d): fired %d times, want %d", i+1, k.state.SpendCents, k.fired, want)
		}
		clock.Advance(30 * time.Minute)
	}
	clock.Advance(2 * time.Hour) // past midnight: a new period
	k.charge(70, 80)
	if k.fired != 1 {
		t.Fatalf("70 of 100 in the new day fired: %d", k.fired)
	}
	k.charge(10, 80)
	if k.fired != 2 {
		t.Fatalf("80 of 100 in the new day: fired %d times, want 2", k.fired)
	}
	k.charge(10, 80)
	if k.fired != 2 {
		t.Fatalf("a charge after the crossing fired again: %d", k.fired)
	}
}

func TestKeySpendAlertRearmsWhenTheLimitIsRaised(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	k := &keySim{clock: clock, period: storage.SpendPerMonth, state: storage.KeySpendState{LimitCents: 100}}
	k.charge(85, 80)
	k.state.LimitCents = 1000 // 85 is now under 800: armed again
	clock.Advance(24 * time.Hour)
	k.charge(5, 80)
	if k.fired != 1 || !k.state.FiredFor.IsZero() {
		t.Fatalf("after raising the limit: fired %d, fired for %v; want 1 and re-armed", k.fired, k.state.FiredFor)
	}
	k.charge(710, 80) // 800 of 1000 in the same month
	if k.fired != 2 {
		t.Fatalf("crossing the raised limit's share: fired %d, want 2", k.fired)
	}
}

func TestKeySpendDecisionNeedsALimitAndAShare(t *testing.T) {
	st := storage.KeySpendState{SpendCents: 500, PeriodStart: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}
	p := int64(50)
	if fire, rearm := storage.KeySpendDecision(st, &p); fire || rearm {
		t.Errorf("a key without a limit: fire %v, rearm %v", fire, rearm)
	}
	st.LimitCents = 100
	if fire, _ := storage.KeySpendDecision(st, nil); fire {
		t.Error("an account without a key spend share fired")
	}
	if fire, _ := storage.KeySpendDecision(st, &p); !fire {
		t.Error("500 of 100 at 50% did not fire")
	}
	if got := storage.KeySpendThreshold(101, 80); got != 81 {
		t.Errorf("80%% of 101 = %d, want 81 (rounded up)", got)
	}
}
