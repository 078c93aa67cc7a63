package billing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// settler is a storage.Usage that keeps the first record of each request.
type settler struct {
	got map[string]storage.UsageRecord
	err error
}

func (s *settler) SettleUsage(_ context.Context, u storage.UsageRecord) (storage.UsageRecord, error) {
	if s.err != nil {
		return storage.UsageRecord{}, s.err
	}
	if first, ok := s.got[u.RequestID]; ok {
		return first, nil
	}
	s.got[u.RequestID] = u
	return u, nil
}

func (s *settler) SettleUsageBatch(ctx context.Context, recs []storage.UsageRecord) ([]storage.Settlement, error) {
	out := make([]storage.Settlement, len(recs))
	for i, u := range recs {
		out[i].Record, out[i].Err = s.SettleUsage(ctx, u)
	}
	return out, nil
}

func (s *settler) UsageRecords(context.Context, string, int) ([]storage.UsageRecord, error) {
	return nil, errors.New("settler keeps no listing")
}

func TestRecorder(t *testing.T) {
	started := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	rec := storage.UsageRecord{
		AccountID: "acct_1", KeyID: "key_1", RequestID: "r-1", EndUser: "u1", SessionID: "s1", Model: "svc-3", Stream: true,
		PromptTokens: 5000, CompletionTokens: 1000, AnswerTokens: 600, Estimated: true,
		Rounds: 3, ToolCalls: 2, Outcome: storage.OutcomeClientGone, Started: started, Finished: started.Add(time.Second),
	}
	tests := []struct {
		name    string
		profile policy.Profile
		want    int64
	}{
		{"revision B", policy.ProfileFor(policy.RevisionB), 3}, // 1.5 + 1.0 = 2.5, half up
		{"minimum", policy.Profile{MinChargeCents: 7}, 7},
		{"the record's model has its own prices", pricedModels(map[string]policy.ModelPrice{
			"svc-3": {InputPerMTok: policy.CentsPerMTok(1000), OutputPerMTok: policy.CentsPerMTok(4000)}}), 9}, // 5 + 4
		{"other models' prices do not apply", pricedModels(map[string]policy.ModelPrice{
			"svc-4": {InputPerMTok: policy.CentsPerMTok(1000), OutputPerMTok: policy.CentsPerMTok(4000)}}), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &settler{got: make(map[string]storage.UsageRecord)}
			r := &Recorder{Store: store, Profile: tt.profile}
			cost, err := r.RecordUsage(t.Context(), rec)
			if err != nil || cost != tt.want {
				t.Fatalf("RecordUsage = %d, %v; want %d", cost, err, tt.want)
			}
			want := storage.UsageRecord{
				AccountID: "acct_1", KeyID: "key_1", RequestID: "r-1", EndUser: "u1", SessionID: "s1", Model: "svc-3", Stream: true,
				PromptTokens: 5000, CompletionTokens: 1000, AnswerTokens: 600, Estimated: true,
				Rounds: 3, ToolCalls: 2, Outcome: "client_gone", Started: rec.Started, Finished: rec.Finished,
				CostCents: tt.want,
			}
			if got := store.got["r-1"]; got != want {
				t.Errorf("stored %+v, want %+v", got, want)
			}
			// The store's answer, not the new price, is the cost.
			again := rec
			again.PromptTokens *= 100
			if cost, err := r.RecordUsage(t.Context(), again); err != nil || cost != tt.want {
				t.Errorf("RecordUsage again = %d, %v; want the first cost %d", cost, err, tt.want)
			}
		})
	}
}

func TestRecorderError(t *testing.T) {
	r := &Recorder{Store: &settler{err: storage.ErrNotFound}, Profile: policy.ProfileFor(policy.RevisionB)}
	cost, err := r.RecordUsage(t.Context(), storage.UsageRecord{AccountID: "acct_1", RequestID: "r-1"})
	if !errors.Is(err, storage.ErrNotFound) || cost != 0 {
		t.Errorf("RecordUsage = %d, %v; want 0 and an error wrapping ErrNotFound", cost, err)
	}
}

// pricedModels is the revision B profile with prices for some models.
func pricedModels(prices map[string]policy.ModelPrice) policy.Profile {
	p := policy.ProfileFor(policy.RevisionB)
	p.ModelPrices = prices
	return p
}
