package billing

import (
	"strings"
	"sync"
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
		if price := s.SettleHold(rec, holdFunc(func(c int64) { held = c })); price != 3 {
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

// Through the ledger writer, the same: Committed is told of the record
// as the caller gave it and of what was charged, or of the error, and
// the hold is settled with the charge, or with the price on a failure.
func TestSettlerSettlesTheHoldThroughTheWriter(t *testing.T) {
	store := newBatchStore()
	store.badRequest = "r-bad"
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0}, never)
	defer w.Close()
	type told struct {
		rec     storage.UsageRecord
		charged int64
		err     error
		held    int64
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[string]*told{}
	s := Settler{
		Recorder: &Recorder{Store: store, Profile: pricedModels(nil), Writer: w},
		Committed: func(rec storage.UsageRecord, charged int64, err error) {
			mu.Lock()
			defer mu.Unlock()
			got[rec.RequestID].rec, got[rec.RequestID].charged, got[rec.RequestID].err = rec, charged, err
		},
	}
	for _, id := range []string{"r-ok", "r-bad"} {
		got[id] = &told{held: -1}
		wg.Add(1)
		rec := storage.UsageRecord{AccountID: "acct_1", RequestID: id, Model: "m", PromptTokens: 5000, CompletionTokens: 1000}
		if price := s.SettleHold(rec, holdFunc(func(c int64) {
			mu.Lock()
			got[id].held = c
			mu.Unlock()
			wg.Done()
		})); price != 3 {
			t.Errorf("%s: SettleHold = %d, want the price, 3", id, price)
		}
	}
	wg.Wait()
	ok, bad := got["r-ok"], got["r-bad"]
	if ok.err != nil || ok.charged != 3 || ok.held != 3 || ok.rec.PromptTokens != 5000 || ok.rec.CostCents != 0 {
		t.Errorf("r-ok: %+v, want 3 charged and held, the record as given", ok)
	}
	if bad.err == nil || !strings.Contains(bad.err.Error(), "r-bad") || bad.charged != 0 || bad.held != 3 {
		t.Errorf("r-bad: %+v, want the request's error, 0 charged and the price held", bad)
	}
}

// holdFunc is a HandedHold that calls itself.
type holdFunc func(charged int64)

func (f holdFunc) Settle(charged int64) { f(charged) }

// A charge kept by the caller (SettleHeld) completes once, through the
// queue while the writer runs and before SettleHeld returns once it is
// closed: Committed is told of the caller's record, and the hold is
// settled with the amount charged.
func TestSettlerSettlesAHeldCharge(t *testing.T) {
	store := newBatchStore()
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0}, never)
	var mu sync.Mutex
	told := map[string]int64{}
	s := Settler{
		Recorder: &Recorder{Store: store, Profile: pricedModels(nil), Writer: w},
		Committed: func(rec storage.UsageRecord, charged int64, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil || rec.CostCents != 0 || rec.PromptTokens != 5000 {
				t.Errorf("Committed(%+v, %d, %v), want the caller's record charged", rec, charged, err)
			}
			told[rec.RequestID] += charged
		},
	}
	settle := func(id string) chan int64 {
		held := make(chan int64, 2)
		c := &HeldCharge{Record: storage.UsageRecord{AccountID: "acct_1", RequestID: id, Model: "m", PromptTokens: 5000, CompletionTokens: 1000}}
		if price := s.SettleHeld(c, holdFunc(func(charged int64) { held <- charged })); price != 3 {
			t.Errorf("%s: SettleHeld = %d, want the price, 3", id, price)
		}
		return held
	}
	queued := settle("r-queued")
	if got := <-queued; got != 3 {
		t.Errorf("r-queued: the hold was settled with %d, want 3", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	closed := settle("r-after-close")
	select {
	case got := <-closed:
		if got != 3 {
			t.Errorf("r-after-close: the hold was settled with %d, want 3", got)
		}
	default:
		t.Error("r-after-close: the hold was not settled before SettleHeld returned on a closed writer")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queued)+len(closed) != 0 || told["r-queued"] != 3 || told["r-after-close"] != 3 {
		t.Errorf("holds settled again or Committed told %v, want each charge once, 3", told)
	}
}
