package storagetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// testUsageBatch checks SettleUsageBatch: every record settles as
// SettleUsage would settle it alone, a bad record fails alone, and
// concurrent batches in several processes neither deadlock nor charge a
// request twice.
func (h *harness) testUsageBatch(t *testing.T) {
	t.Run("Empty", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		if got, err := s.SettleUsageBatch(t.Context(), nil); err != nil || len(got) != 0 {
			t.Errorf("SettleUsageBatch(nil) = %v, %v; want nothing", got, err)
		}
	})

	t.Run("EachRecordAsAlone", func(t *testing.T) {
		// The same records, settled one by one in one database and as one
		// batch in another, must leave the same answers, records and
		// ledgers.
		records := func(t *testing.T, s storage.Store, c clock) ([]storage.UsageRecord, []string) {
			ctx := t.Context()
			a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
			mustPost(t, s, a.ID, 1000, "topup-1")
			// Settled before the batch: its retry answers the first cost.
			mustSettle(t, s, storage.UsageRecord{AccountID: a.ID, RequestID: "earlier", CostCents: 11})
			// Charged without a record: the record takes the charge.
			if _, err := s.Post(ctx, storage.Entry{AccountID: b.ID, AmountCents: -7, Kind: storage.EntryCharge, Reference: "req:posted"}); err != nil {
				t.Fatal(err)
			}
			started := c.Advance(time.Second)
			finished := c.Advance(time.Second)
			return []storage.UsageRecord{
				{AccountID: a.ID, KeyID: "key_1", RequestID: "r-1", EndUser: "u1", SessionID: "s1", Model: "svc-3", Stream: true,
					PromptTokens: 1000, CompletionTokens: 200, AnswerTokens: 100, Estimated: true, Rounds: 2, ToolCalls: 1,
					Outcome: storage.OutcomeClientGone, Started: started, Finished: finished, CostCents: 5},
				{AccountID: b.ID, RequestID: "r-1", CostCents: 3}, // the same id on another account
				{AccountID: a.ID, RequestID: "earlier", CostCents: 99},
				{AccountID: "acct_unknown", RequestID: "r-2", CostCents: 1},
				{AccountID: a.ID, RequestID: "", CostCents: 1},
				{AccountID: a.ID, RequestID: "r-3", CostCents: -1},
				{AccountID: b.ID, RequestID: "posted", CostCents: 4},
				{AccountID: a.ID, RequestID: "r-4", CostCents: 0},
				{AccountID: a.ID, RequestID: "r-1", CostCents: 50}, // twice in one batch: the first wins
				{AccountID: a.ID, RequestID: "r-5", CostCents: 300_000},
			}, []string{a.ID, b.ID}
		}
		h.compareWithAlone(t, records)
	})

	t.Run("ManyFreshAsAlone", func(t *testing.T) {
		// New requests of three accounts, more than one INSERT takes.
		records := func(t *testing.T, s storage.Store, c clock) ([]storage.UsageRecord, []string) {
			a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
			carol := mustAccount(t, s, "carol")
			mustPost(t, s, b.ID, 500, "topup-1")
			finished := c.Advance(time.Second)
			var recs []storage.UsageRecord
			for i := range 150 {
				acct := []string{a.ID, b.ID, carol.ID}[i%3]
				recs = append(recs, storage.UsageRecord{AccountID: acct, RequestID: fmt.Sprint("r-", i), KeyID: "key_1",
					Model: "svc-3", PromptTokens: int64(1000 * i), CompletionTokens: int64(i), Estimated: i%7 == 0,
					Outcome: storage.OutcomeCompleted, Started: finished.Add(-time.Second), Finished: finished, CostCents: int64(i % 5)})
			}
			return recs, []string{a.ID, b.ID, carol.ID}
		}
		h.compareWithAlone(t, records)
	})

	t.Run("ManyWithRepeatsAsAlone", func(t *testing.T) {
		// Enough records for the batch's rows to go in one COPY where
		// the store has it, with repeats among them: one settled
		// before, one charged without its record, one twice in the
		// batch.
		records := func(t *testing.T, s storage.Store, c clock) ([]storage.UsageRecord, []string) {
			ctx := t.Context()
			a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
			mustPost(t, s, a.ID, 1000, "topup-1")
			mustSettle(t, s, storage.UsageRecord{AccountID: a.ID, RequestID: "earlier", CostCents: 11})
			if _, err := s.Post(ctx, storage.Entry{AccountID: b.ID, AmountCents: -7, Kind: storage.EntryCharge, Reference: "req:posted"}); err != nil {
				t.Fatal(err)
			}
			finished := c.Advance(time.Second)
			var recs []storage.UsageRecord
			for i := range 40 {
				recs = append(recs, storage.UsageRecord{AccountID: []string{a.ID, b.ID}[i%2], RequestID: fmt.Sprint("r-", i),
					KeyID: "key_1", Model: "svc-3", PromptTokens: int64(100 * i), Outcome: storage.OutcomeCompleted,
					Started: finished.Add(-time.Second), Finished: finished, CostCents: int64(i % 4)})
			}
			recs = append(recs,
				storage.UsageRecord{AccountID: a.ID, RequestID: "earlier", CostCents: 99},
				storage.UsageRecord{AccountID: b.ID, RequestID: "posted", CostCents: 4},
				storage.UsageRecord{AccountID: a.ID, RequestID: "r-2", CostCents: 50},
			)
			return recs, []string{a.ID, b.ID}
		}
		h.compareWithAlone(t, records)
	})

	t.Run("BadRecordFailsAlone", func(t *testing.T) {
		// PostgreSQL refuses a NUL byte in text, SQLite stores it: either
		// way the records around it settle, and a refused record leaves
		// neither a record nor a charge.
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		got, err := s.SettleUsageBatch(ctx, []storage.UsageRecord{
			{AccountID: a.ID, RequestID: "r-1", CostCents: 1},
			{AccountID: a.ID, RequestID: "r-2", EndUser: "nul\x00byte", Model: "bad\xffutf8", CostCents: 10},
			{AccountID: a.ID, RequestID: "r-3", CostCents: 100},
		})
		if err != nil || len(got) != 3 {
			t.Fatalf("SettleUsageBatch = %v, %v", got, err)
		}
		want := int64(-101)
		t.Logf("the record with a NUL byte and bad UTF-8: %v", got[1].Err)
		if got[0].Err != nil || got[2].Err != nil || got[0].Record.CostCents != 1 || got[2].Record.CostCents != 100 {
			t.Errorf("the good records: %+v, %+v", got[0], got[2])
		}
		records, _ := s.UsageRecords(ctx, a.ID, 0)
		if got[1].Err == nil {
			want -= 10
			if len(records) != 3 {
				t.Errorf("%d records; the store took all three", len(records))
			}
		} else if len(records) != 2 {
			t.Errorf("%d records; the refused one must leave none: %+v", len(records), records)
		}
		entries, err := s.Entries(ctx, a.ID, 0)
		if err != nil || len(entries) != len(records) {
			t.Errorf("%d entries, %v; want one per record (%d)", len(entries), err, len(records))
		}
		if b, err := s.Balance(ctx, a.ID); err != nil || b != want || entries[0].BalanceAfterCents != want {
			t.Errorf("Balance = %d, %v, last entry %d; want %d", b, err, entries[0].BalanceAfterCents, want)
		}
	})

	t.Run("ConcurrentBatches", func(t *testing.T) {
		// Two processes settle batches that charge the same accounts in
		// opposite orders and share request ids: no deadlock, each
		// request charged once, each ledger a chain that ends at its
		// balance.
		procs := h.processes(t, storage.Options{})
		ctx := t.Context()
		var ids []string
		for i := range 4 {
			a := mustAccount(t, procs[0], fmt.Sprint("acct-", i))
			mustPost(t, procs[0], a.ID, 100_000, "topup")
			ids = append(ids, a.ID)
		}
		const batches, perBatch, requests = 16, 12, 40
		errs := make([]error, batches)
		parallel(batches, func(b int) {
			s := procs.pick(b)
			var recs []storage.UsageRecord
			for j := range perBatch {
				k := (b*perBatch + j) % requests
				acct := ids[k%len(ids)]
				if b%2 == 1 {
					acct = ids[len(ids)-1-k%len(ids)]
				}
				recs = append(recs, storage.UsageRecord{AccountID: acct, RequestID: fmt.Sprint("r-", k), CostCents: int64(k + 1)})
			}
			got, err := s.SettleUsageBatch(ctx, recs)
			if err == nil {
				for _, st := range got {
					err = errors.Join(err, st.Err)
				}
			}
			errs[b] = err
		})
		checkErrs(t, "SettleUsageBatch", errs)
		for _, id := range ids {
			entries, err := procs[1].Entries(ctx, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkChain(t, entries)
			seen := make(map[string]bool)
			var sum int64
			for _, e := range entries {
				if seen[e.Reference] {
					t.Errorf("%s charged twice", e.Reference)
				}
				seen[e.Reference] = true
				sum += e.AmountCents
			}
			records, _ := procs[1].UsageRecords(ctx, id, 0)
			if len(records) != len(entries)-1 {
				t.Errorf("%d records for %d charges", len(records), len(entries)-1)
			}
			wantBalance(t, procs[0], id, sum)
		}
	})
}

// compareWithAlone settles the records that records makes, one by one
// in one database and as one batch in another, and compares the answers,
// ledgers and usage records of the two accounts records names.
func (h *harness) compareWithAlone(t *testing.T,
	records func(t *testing.T, s storage.Store, c clock) ([]storage.UsageRecord, []string)) {
	t.Helper()
	single := h.store(t, newClock().options())
	singleRecs, singleIDs := records(t, single, newClock())
	var want []storage.Settlement
	for _, u := range singleRecs {
		stored, err := single.SettleUsage(t.Context(), u)
		want = append(want, storage.Settlement{Record: stored, Err: err})
	}

	// A subtest has a database of its own.
	t.Run("Batched", func(t *testing.T) {
		c := newClock()
		batched := h.store(t, c.options())
		batchRecs, batchIDs := records(t, batched, newClock())
		got, err := batched.SettleUsageBatch(t.Context(), batchRecs)
		if err != nil || len(got) != len(want) {
			t.Fatalf("SettleUsageBatch = %d settlements, %v; want %d", len(got), err, len(want))
		}
		// Account ids differ between the databases; compare with
		// them swapped back.
		swap := make(map[string]string)
		for i, id := range batchIDs {
			swap[id] = singleIDs[i]
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Record.AccountID != "" {
				g.Record.AccountID = swap[g.Record.AccountID]
			}
			if (g.Err == nil) != (w.Err == nil) || errors.Is(g.Err, storage.ErrNotFound) != errors.Is(w.Err, storage.ErrNotFound) {
				t.Errorf("record %d: batch error %v, alone %v", i, g.Err, w.Err)
			}
			if !usageEqual(g.Record, w.Record) {
				t.Errorf("record %d: batch settled %+v, alone %+v", i, g.Record, w.Record)
			}
		}
		for i := range singleIDs {
			acct := [2]string{singleIDs[i], batchIDs[i]}
			we, err1 := single.Entries(t.Context(), acct[0], 0)
			ge, err2 := batched.Entries(t.Context(), acct[1], 0)
			if err1 != nil || err2 != nil || len(we) != len(ge) {
				t.Fatalf("Entries: %d (%v) batched, %d (%v) alone", len(ge), err2, len(we), err1)
			}
			for i := range we {
				if ge[i].AmountCents != we[i].AmountCents || ge[i].BalanceAfterCents != we[i].BalanceAfterCents ||
					ge[i].Reference != we[i].Reference || ge[i].Kind != we[i].Kind || ge[i].Note != we[i].Note {
					t.Errorf("entry %d: batched %+v, alone %+v", i, ge[i], we[i])
				}
			}
			wb, _ := single.Balance(t.Context(), acct[0])
			gb, err := batched.Balance(t.Context(), acct[1])
			if err != nil || gb != wb || gb != we[0].BalanceAfterCents {
				t.Errorf("Balance batched %d (%v), alone %d; last entry %d", gb, err, wb, we[0].BalanceAfterCents)
			}
			wr, _ := single.UsageRecords(t.Context(), acct[0], 0)
			gr, err := batched.UsageRecords(t.Context(), acct[1], 0)
			if err != nil || len(gr) != len(wr) {
				t.Errorf("UsageRecords: %d batched (%v), %d alone", len(gr), err, len(wr))
			}
		}
	})
}
