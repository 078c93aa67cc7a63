package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// A batch's INSERTs bind a value its rows share once: every row must
// come back as it went in, whichever of its columns it shared with its
// neighbours. 21 charges make INSERTs of 16, 4 and 1 rows; the first 16
// share everything but their ids and amounts, the next 4 differ in one
// column more each, and the entries' texts include the empty one, which
// is bound once for many rows and must not turn into NULL.
func TestSettleBatchSharedValuesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	s, a := openWithAccount(t, path, "shared")
	b, err := s.EnsureAccount(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMicro(1_760_000_000_000_000).UTC()
	var records []storage.UsageRecord
	var entries []storage.RequestLogEntry
	for i := range 21 {
		u := storage.UsageRecord{
			AccountID: a.ID, KeyID: "key_a", RequestID: fmt.Sprintf("%016x-r%02d", at.UnixMicro(), i),
			Model: "m-1", Upstream: "http://u", PromptTokens: 10, CompletionTokens: 5,
			Outcome: storage.OutcomeCompleted, CostCents: int64(1 + i%3), Started: at, Finished: at,
		}
		e := storage.RequestLogEntry{
			AccountID: a.ID, KeyID: "key_a", At: at, RequestID: fmt.Sprintf("q%02d", i), ChargeID: u.RequestID,
			Route: "v1", Method: "POST", Path: "/v1/chat/completions", ModelAsked: "m-1", ModelServed: "m-1",
			Upstream: "http://u", Status: 200, PromptTokens: 10, CompletionTokens: 5, CostCents: u.CostCents,
			Latency: time.Millisecond, FirstByte: time.Millisecond,
		}
		switch i {
		case 16:
			u.AccountID, e.AccountID = b.ID, b.ID
		case 17:
			u.KeyID, e.KeyID = "key_b", "key_b"
		case 18:
			u.EndUser, e.EndUser = "user-1", "user-1"
			e.ErrorCode = "upstream_error"
		case 19:
			u.Model, e.ModelServed = "m-2", "m-2"
			u.Stream, e.Stream = true, true
			u.Finished = at.Add(time.Second)
		}
		records = append(records, u)
		entries = append(entries, e)
	}
	settled, logErr, err := s.SettleUsageBatchLogged(t.Context(), records, entries)
	if err != nil || logErr != nil {
		t.Fatal(err, logErr)
	}
	for i, st := range settled {
		if st.Err != nil {
			t.Fatalf("record %d: %v", i, st.Err)
		}
	}

	var gotRecords []storage.UsageRecord
	var gotEntries []storage.RequestLogEntry
	var charges []storage.LedgerEntry
	for _, account := range []string{a.ID, b.ID} {
		recs, err := s.UsageRecords(t.Context(), account, 0)
		if err != nil {
			t.Fatal(err)
		}
		gotRecords = append(gotRecords, recs...)
		page, err := s.RequestLogPage(t.Context(), account, storage.RequestLogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		gotEntries = append(gotEntries, page...)
		cs, err := s.Charges(t.Context(), account, 0)
		if err != nil {
			t.Fatal(err)
		}
		charges = append(charges, cs...)
	}
	if len(gotRecords) != len(records) || len(gotEntries) != len(entries) || len(charges) != len(records) {
		t.Fatalf("%d records, %d entries, %d charges stored; want %d each",
			len(gotRecords), len(gotEntries), len(charges), len(records))
	}
	for _, want := range records {
		i := slices.IndexFunc(gotRecords, func(u storage.UsageRecord) bool { return u.RequestID == want.RequestID })
		if i < 0 {
			t.Errorf("record %s not stored", want.RequestID)
			continue
		}
		got := gotRecords[i]
		got.RecordedAt = time.Time{}
		want.Started, want.Finished = want.Started.UTC(), want.Finished.UTC()
		if got != want {
			t.Errorf("record stored as\n%+v\nwant\n%+v", got, want)
		}
		j := slices.IndexFunc(charges, func(e storage.LedgerEntry) bool {
			return e.Reference == storage.ChargeReferencePrefix+want.RequestID
		})
		if j < 0 || charges[j].AmountCents != -want.CostCents || charges[j].AccountID != want.AccountID ||
			charges[j].Kind != storage.EntryCharge || charges[j].Note != fmt.Sprintf("%s: 10 prompt + 5 completion tokens", want.Model) {
			t.Errorf("charge of %s: %+v", want.RequestID, charges[max(j, 0)])
		}
	}
	for _, want := range entries {
		i := slices.IndexFunc(gotEntries, func(e storage.RequestLogEntry) bool { return e.RequestID == want.RequestID })
		if i < 0 {
			t.Errorf("entry %s not stored", want.RequestID)
			continue
		}
		got := gotEntries[i]
		got.ID = ""
		got.At = got.At.UTC()
		if got != want {
			t.Errorf("entry stored as\n%+v\nwant\n%+v", got, want)
		}
	}
	// The running totals are the sums of the charges.
	var sumA int64
	for _, u := range records {
		if u.AccountID == a.ID {
			sumA += u.CostCents
		}
	}
	if bal, err := s.Balance(t.Context(), a.ID); err != nil || bal != -sumA {
		t.Errorf("balance %d, %v; want %d", bal, err, -sumA)
	}
}
