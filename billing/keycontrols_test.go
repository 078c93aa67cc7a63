package billing

import (
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

func TestKeyControlsTightenTheProfile(t *testing.T) {
	prof := policy.ProfileFor(policy.RevisionB)
	prof.RequestsPerPeriod, prof.Period, prof.ConcurrentStreams = 60, time.Minute, 4
	ask := Ask{Meter: V1JSON, Model: "m", Stream: true, MaxTokens: 100}

	plain := policy.Principal{KeyID: "key_1", AccountID: "acct_1", BalanceCents: 500}
	req, _ := AfterBody(prof, plain, ask)
	if req.Rate.Limit != 60 || req.StreamLimit != 4 || req.Reserve.KeySpend != (limits.KeySpend{}) {
		t.Fatalf("a key without controls: %+v", req)
	}

	tight := plain
	tight.Controls = storage.KeyControls{RatePerMinute: 10, StreamLimit: 1, SpendLimitCents: 100, SpendPeriod: storage.SpendPerDay}
	tight.PeriodSpendCents, tight.Period = 30, "d2030-05-01"
	req, _ = AfterBody(prof, tight, ask)
	wantSpend := limits.KeySpend{Key: "key_1", Period: "d2030-05-01", Limit: 100, Spent: 30}
	if req.Rate.Limit != 10 || req.Rate.Period != time.Minute || req.StreamLimit != 1 || req.Reserve.KeySpend != wantSpend {
		t.Fatalf("a key with controls: rate %+v, streams %d, spend %+v", req.Rate, req.StreamLimit, req.Reserve.KeySpend)
	}
	if before := BeforeBody(prof, tight, V1JSON); before.Rate.Limit != 10 || before.Reserve.KeySpend != wantSpend {
		t.Fatalf("before the body: %+v", before)
	}

	// A key's limits above the profile's change nothing.
	loose := plain
	loose.Controls = storage.KeyControls{RatePerMinute: 600, StreamLimit: 9}
	req, _ = AfterBody(prof, loose, ask)
	if req.Rate.Limit != 60 || req.StreamLimit != 4 {
		t.Fatalf("a key with looser limits: rate %+v, streams %d", req.Rate, req.StreamLimit)
	}
}

func TestKeySpendRefusal(t *testing.T) {
	ae := Refusal(&limits.SpendLimitError{Limit: 100, Spent: 99, Want: 2}, 500)
	if ae.Status != 402 || ae.Code != "key_spend_limit_reached" {
		t.Fatalf("spent: %d %s", ae.Status, ae.Code)
	}
	ae = Refusal(&limits.SpendLimitError{Limit: 100, Spent: 10, Held: 89, Want: 2}, 500)
	if ae.Status != 429 || ae.Code != "key_spend_limit_reached" || ae.RetryAfter <= 0 {
		t.Fatalf("held: %d %s", ae.Status, ae.Code)
	}
}
