package billing

import (
	"testing"

	"github.com/switchyardhq/switchyard/storage"
)

// A committed charge settles the hold with the amount charged; a failed
// one with the price, so that the mirrored balance errs on the low side.
func TestSettlerSettlesTheHold(t *testing.T) {
	store := newBatchStore()
	store.badRequest = "r-bad"
	var told []string
	s := Settler{
		Recorder: &Recorder{Store: store, Profile: pricedModels(nil)},
		Committed: func(rec storage.UsageRecord, charged int64, err error) {
			told = append(told, rec.RequestID)
		},
	}
	for _, tt := range []struct {
		id       string
		wantHold int64
	}{{"r-ok", 3}, {"r-bad", 3}} {
		held := int64(-1)
		rec := storage.UsageRecord{AccountID: "acct_1", RequestID: tt.id, Model: "m", PromptTokens: 5000, CompletionTokens: 1000}
		if price := s.SettleHold(rec, func(c int64) { held = c }); price != 3 {
			t.Errorf("%s: SettleHold = %d, want the price, 3", tt.id, price)
		}
		if held != tt.wantHold {
			t.Errorf("%s: the hold was settled with %d, want %d", tt.id, held, tt.wantHold)
		}
	}
	if len(told) != 2 {
		t.Errorf("Committed told of %v, want both charges", told)
	}
}
