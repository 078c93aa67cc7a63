package limits

import (
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
)

// maxInWindow replays requests arriving every step for total against r
// and returns the most admitted within any window of length window.
func maxInWindow(r Rate, step, total, window time.Duration) int {
	var s rateState
	var admitted []int64
	for now := int64(0); now <= int64(total); now += int64(step) {
		d := s.decide(now, r)
		if d.res.Allowed {
			s.commit(now, r, d)
			admitted = append(admitted, now)
		}
	}
	most, first := 0, 0
	for last := range admitted {
		for admitted[last]-admitted[first] >= int64(window) {
			first++
		}
		most = max(most, last-first+1)
	}
	return most
}

// TestRevisionRates pins the mapping of the spec's request limits and
// why both revisions need the rolling window: under GCRA with burst equal
// to the limit, a client that bursts and then keeps pace gets almost
// twice the limit into one window.
func TestRevisionRates(t *testing.T) {
	tests := []struct {
		name       string
		rate       Rate
		wantMostIn int // most requests in any 60 s window, hammering every 100ms
	}{
		{name: "A", rate: RateFor(policy.ProfileFor(policy.RevisionA)), wantMostIn: 150},
		{name: "A as plain GCRA", rate: Rate{Limit: 150, Period: time.Minute, Burst: 150}, wantMostIn: 299},
		{name: "B", rate: RateFor(policy.ProfileFor(policy.RevisionB)), wantMostIn: 60},
		{name: "B as a rate", rate: RateFor(rateProfile(policy.RevisionB)), wantMostIn: 119},
		{name: "GCRA without burst", rate: Rate{Limit: 150, Period: time.Minute, Burst: 1}, wantMostIn: 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := maxInWindow(tt.rate, 100*time.Millisecond, 10*time.Minute, time.Minute)
			if got != tt.wantMostIn {
				t.Fatalf("%+v admitted %d in one minute, want %d", tt.rate, got, tt.wantMostIn)
			}
		})
	}
	if a := RateFor(policy.ProfileFor(policy.RevisionA)); !a.Rolling || a.Limit != 150 || a.Period != time.Minute {
		t.Fatalf("revision A rate %+v", a)
	}
	if b := RateFor(policy.ProfileFor(policy.RevisionB)); !b.Rolling || b.Limit != 60 || b.Period != time.Minute {
		t.Fatalf("revision B rate %+v", b)
	}
	if b := RateFor(rateProfile(policy.RevisionB)); b.Rolling || b.Limit != 60 || b.Burst != 60 || b.Period != time.Minute {
		t.Fatalf("revision B rate with Rolling off %+v", b)
	}
}

// rateProfile is a revision's profile with its request limit enforced as
// a rate (GCRA), as the Caddyfile's "requests <n> <period> rate" sets it.
func rateProfile(r policy.Revision) policy.Profile {
	p := policy.ProfileFor(r)
	p.Rolling = false
	return p
}
