package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// loggedBatch is n usage records of account, each with its request log
// entry; the entry of the record numbered refused (if any) goes to the
// path a test's trigger refuses.
func loggedBatch(account string, n, refused int) ([]storage.UsageRecord, []storage.RequestLogEntry) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var recs []storage.UsageRecord
	var entries []storage.RequestLogEntry
	for i := range n {
		id := fmt.Sprintf("%016x-%04d", now.UnixNano(), i)
		recs = append(recs, storage.UsageRecord{AccountID: account, KeyID: "key_1", RequestID: id, Model: "small",
			PromptTokens: 10, CompletionTokens: 5, Outcome: storage.OutcomeCompleted, CostCents: 3,
			Started: now, Finished: now})
		path := "/v1/chat/completions"
		if i == refused {
			path = RefusedLogPath
		}
		entries = append(entries, storage.RequestLogEntry{AccountID: account, KeyID: "key_1", At: now,
			RequestID: id, ChargeID: id, Route: "v1", Method: "POST", Path: path, ModelAsked: "small",
			ModelServed: "small", Status: 200, PromptTokens: 10, CompletionTokens: 5, CostCents: 3})
	}
	return recs, entries
}

// RefusedLogPath is the path of a request log entry that the trigger a
// store's test installs (RunSettleUsageBatchLogged's refuse) refuses.
const RefusedLogPath = "/refused"

// RunSettleUsageBatchLogged checks SettleUsageBatchLogged on s: a
// batch's charges and entries commit in one transaction (transactions
// counts them); once refuse installed a trigger that refuses an entry,
// a batch with such an entry loses its entries and commits its charges.
func RunSettleUsageBatchLogged(t *testing.T, s interface {
	storage.Store
	storage.LoggedSettler
}, refuse func(), transactions func() uint64) {
	ctx := t.Context()
	a, err := s.EnsureAccount(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var wantLog, wantRecords int
	var wantBalance int64
	// 40 rows go in one COPY where the store has it, 5 in INSERTs.
	for _, n := range []int{5, 40} {
		for _, refused := range []bool{false, true} {
			t.Run(fmt.Sprintf("rows=%d/refused=%v", n, refused), func(t *testing.T) {
				if refused {
					refuse()
				}
				which := -1
				if refused {
					which = n / 2
				}
				recs, entries := loggedBatch(a.ID, n, which)
				before := transactions()
				settled, logErr, err := s.SettleUsageBatchLogged(ctx, recs, entries)
				if err != nil {
					t.Fatal(err)
				}
				if got := transactions() - before; got != 1 {
					t.Errorf("%d write transactions; want 1", got)
				}
				for i, x := range settled {
					if x.Err != nil || x.Record.RequestID != recs[i].RequestID || x.Record.CostCents != 3 {
						t.Errorf("settlement %d = %+v; want %s charged 3", i, x, recs[i].RequestID)
					}
				}
				if refused && logErr == nil {
					t.Error("an entry the database refused: no log error")
				}
				if !refused && logErr != nil {
					t.Errorf("log error %v; want none", logErr)
				}
				if !refused {
					wantLog += n
				}
				wantRecords += n
				wantBalance -= int64(3 * n)
				if got, err := s.Balance(ctx, a.ID); err != nil || got != wantBalance {
					t.Errorf("Balance = %d, %v; want %d: the charges must commit whatever became of the entries",
						got, err, wantBalance)
				}
				if got, err := s.UsageRecords(ctx, a.ID, 0); err != nil || len(got) != wantRecords {
					t.Errorf("UsageRecords = %d, %v; want %d", len(got), err, wantRecords)
				}
				if got, err := s.RequestLogPage(ctx, a.ID, storage.RequestLogQuery{}); err != nil || len(got) != wantLog {
					t.Errorf("RequestLogPage = %d entries, %v; want %d", len(got), err, wantLog)
				}
			})
		}
	}
	t.Run("settled before", func(t *testing.T) {
		// A retried batch charges once and logs again, as two calls of
		// SettleUsageBatch and AppendRequestLog would.
		recs, entries := loggedBatch(a.ID, 3, -1)
		if _, _, err := s.SettleUsageBatchLogged(ctx, recs, entries); err != nil {
			t.Fatal(err)
		}
		settled, logErr, err := s.SettleUsageBatchLogged(ctx, recs, entries)
		if err != nil || logErr != nil {
			t.Fatal(err, logErr)
		}
		for i, x := range settled {
			if x.Err != nil || x.Record.RequestID != recs[i].RequestID {
				t.Errorf("settlement %d = %+v", i, x)
			}
		}
		wantBalance -= 9
		if got, err := s.Balance(ctx, a.ID); err != nil || got != wantBalance {
			t.Errorf("Balance = %d, %v; want %d", got, err, wantBalance)
		}
		if got, err := s.RequestLogPage(ctx, a.ID, storage.RequestLogQuery{}); err != nil || len(got) != wantLog+6 {
			t.Errorf("RequestLogPage = %d entries, %v; want %d", len(got), err, wantLog+6)
		}
	})
	t.Run("entries alone", func(t *testing.T) {
		_, entries := loggedBatch(a.ID, 2, -1)
		settled, logErr, err := s.SettleUsageBatchLogged(ctx, nil, entries)
		if err != nil || logErr != nil || len(settled) != 0 {
			t.Fatalf("SettleUsageBatchLogged(no records) = %v, %v, %v", settled, logErr, err)
		}
		if got, err := s.RequestLogPage(ctx, a.ID, storage.RequestLogQuery{}); err != nil || len(got) != wantLog+8 {
			t.Errorf("RequestLogPage = %d entries, %v; want %d", len(got), err, wantLog+8)
		}
	})
}
