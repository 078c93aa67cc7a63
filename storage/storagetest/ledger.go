package storagetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testLedger(t *testing.T) {
	t.Run("PostAndBalance", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		wantBalance(t, s, a.ID, 0)
		if es, err := s.Entries(ctx, a.ID, 10); err != nil || len(es) != 0 {
			t.Errorf("Entries of a new account = %v, %v; want none", es, err)
		}

		posts := []struct {
			name        string
			entry       storage.Entry
			wantBalance int64
		}{
			{"top-up", storage.Entry{AmountCents: 500, Kind: storage.EntryTopUp, Reference: "topup-1", Note: "card"}, 500},
			{"charge", storage.Entry{AmountCents: -120, Kind: storage.EntryCharge, Reference: "req-1"}, 380},
			{"refund", storage.Entry{AmountCents: 20, Kind: storage.EntryRefund, Reference: "req-1-refund"}, 400},
			// Post does not refuse to overdraw.
			{"overdraw", storage.Entry{AmountCents: -1000, Kind: storage.EntryAdjustment, Reference: "adj-1", Note: "correction"}, -600},
			{"zero", storage.Entry{AmountCents: 0, Kind: storage.EntryCharge, Reference: "req-2"}, -600},
		}
		var posted []storage.LedgerEntry
		for _, p := range posts {
			at := c.Advance(time.Second)
			p.entry.AccountID = a.ID
			e, err := s.Post(ctx, p.entry)
			if err != nil {
				t.Fatalf("%s: Post: %v", p.name, err)
			}
			want := storage.LedgerEntry{
				ID: e.ID, AccountID: a.ID, AmountCents: p.entry.AmountCents, BalanceAfterCents: p.wantBalance,
				Kind: p.entry.Kind, Reference: p.entry.Reference, Note: p.entry.Note, CreatedAt: at,
			}
			if !strings.HasPrefix(e.ID, "le_") || !entriesEqual(e, want) {
				t.Errorf("%s: Post = %+v, want %+v with an le_ id", p.name, e, want)
			}
			if b, err := s.Balance(ctx, a.ID); err != nil || b != p.wantBalance {
				t.Errorf("%s: Balance = %d, %v; want %d", p.name, b, err, p.wantBalance)
			}
			posted = append(posted, e)
		}

		all, err := s.Entries(ctx, a.ID, 0)
		if err != nil || len(all) != len(posted) {
			t.Fatalf("Entries(0) = %d entries, %v; want %d", len(all), err, len(posted))
		}
		for i, e := range all {
			if want := posted[len(posted)-1-i]; !entriesEqual(e, want) {
				t.Errorf("Entries[%d] = %+v, want %+v", i, e, want)
			}
		}
		two, err := s.Entries(ctx, a.ID, 2)
		if err != nil || len(two) != 2 || two[0].ID != posted[4].ID || two[1].ID != posted[3].ID {
			t.Errorf("Entries(2) = %+v, %v; want the two newest", two, err)
		}
		// EntriesAfter continues where a page ended, in the same order.
		next, err := s.EntriesAfter(ctx, a.ID, posted[3].ID, 2)
		if err != nil || len(next) != 2 || next[0].ID != posted[2].ID || next[1].ID != posted[1].ID {
			t.Errorf("EntriesAfter(4th newest, 2) = %+v, %v; want the next two", next, err)
		}
		if last, err := s.EntriesAfter(ctx, a.ID, posted[0].ID, 2); err != nil || len(last) != 0 {
			t.Errorf("EntriesAfter(oldest) = %+v, %v; want none", last, err)
		}
		if _, err := s.EntriesAfter(ctx, a.ID, "le_unknown", 2); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("EntriesAfter(unknown id): %v, want ErrNotFound", err)
		}
		if _, err := s.EntriesAfter(ctx, "acct_other", posted[3].ID, 2); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("EntriesAfter(another account's entry): %v, want ErrNotFound", err)
		}
	})

	t.Run("UnknownAccount", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		if _, err := s.Balance(ctx, "acct_unknown"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Balance(unknown): %v, want ErrNotFound", err)
		}
		_, err := s.Post(ctx, storage.Entry{AccountID: "acct_unknown", AmountCents: 1, Kind: storage.EntryTopUp, Reference: "r"})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Post(unknown): %v, want ErrNotFound", err)
		}
		if es, err := s.Entries(ctx, "acct_unknown", 10); err != nil || len(es) != 0 {
			t.Errorf("Entries(unknown) = %v, %v; want none", es, err)
		}
	})

	t.Run("InvalidEntries", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		tests := []struct {
			name  string
			entry storage.Entry
		}{
			{"no reference", storage.Entry{AccountID: a.ID, AmountCents: 1, Kind: storage.EntryTopUp}},
			{"no kind", storage.Entry{AccountID: a.ID, AmountCents: 1, Reference: "r"}},
		}
		for _, tt := range tests {
			if _, err := s.Post(t.Context(), tt.entry); err == nil {
				t.Errorf("%s: Post succeeded", tt.name)
			}
		}
		wantBalance(t, s, a.ID, 0)
	})

	t.Run("DuplicateReference", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		b := mustAccount(t, s, "bob")
		first, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 100, Kind: storage.EntryTopUp, Reference: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Minute)
		again, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 999, Kind: storage.EntryTopUp, Reference: "r1"})
		if !errors.Is(err, storage.ErrDuplicateReference) || !entriesEqual(again, first) {
			t.Errorf("Post of a posted reference = %+v, %v; want %+v, ErrDuplicateReference", again, err, first)
		}
		wantBalance(t, s, a.ID, 100)
		if es, err := s.Entries(ctx, a.ID, 0); err != nil || len(es) != 1 {
			t.Errorf("Entries = %d, %v; want 1", len(es), err)
		}
		// References are unique per account only.
		if _, err := s.Post(ctx, storage.Entry{AccountID: b.ID, AmountCents: 5, Kind: storage.EntryTopUp, Reference: "r1"}); err != nil {
			t.Errorf("the same reference on another account: %v", err)
		}
	})

	t.Run("ReferencesPerKind", h.testReferencesPerKind)

	t.Run("ConcurrentDuplicates", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		const callers = 12
		entries := make([]storage.LedgerEntry, callers)
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			entries[i], errs[i] = procs.pick(i).Post(t.Context(), storage.Entry{AccountID: a.ID, AmountCents: 250, Kind: storage.EntryTopUp, Reference: "once"})
		})
		var posted int
		for i, err := range errs {
			switch {
			case err == nil:
				posted++
			case !errors.Is(err, storage.ErrDuplicateReference):
				t.Errorf("Post: %v", err)
			}
			if entries[i].ID == "" || entries[i].ID != entries[0].ID {
				t.Errorf("Post %d returned entry %q, want the one entry %q", i, entries[i].ID, entries[0].ID)
			}
		}
		if posted != 1 {
			t.Errorf("%d posts succeeded, want 1", posted)
		}
		if es, err := procs[1].Entries(t.Context(), a.ID, 0); err != nil || len(es) != 1 {
			t.Errorf("Entries = %d, %v; want 1", len(es), err)
		}
		wantBalance(t, procs[1], a.ID, 250)
	})

	t.Run("ConcurrentPosts", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		const callers = 20
		var want int64
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			_, errs[i] = procs.pick(i).Post(t.Context(), storage.Entry{
				AccountID: a.ID, AmountCents: int64(i + 1), Kind: storage.EntryTopUp, Reference: fmt.Sprint("r", i),
			})
		})
		for i, err := range errs {
			if err != nil {
				t.Errorf("Post %d: %v", i, err)
			}
			want += int64(i + 1)
		}
		wantBalance(t, procs[0], a.ID, want)
		// Every entry's balance follows from the one before it.
		es, err := procs[1].Entries(t.Context(), a.ID, 0)
		if err != nil || len(es) != callers {
			t.Fatalf("Entries = %d, %v; want %d", len(es), err, callers)
		}
		if es[0].BalanceAfterCents != want {
			t.Errorf("newest entry's balance after = %d, want %d", es[0].BalanceAfterCents, want)
		}
		checkChain(t, es)
	})
}

// testReferencesPerKind checks that each kind of entry has references of
// its own: a top-up whose reference is spelt like a request's charge
// ("req:" + its charge id) is a top-up, never taken for that charge, and
// the request is still charged in full, alone or in a batch, whichever
// was posted first.
func (h *harness) testReferencesPerKind(t *testing.T) {
	s, a := h.storeWithAlice(t, storage.Options{})
	ctx := t.Context()
	topUp := func(ref string, cents int64) storage.LedgerEntry {
		t.Helper()
		e, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: cents, Kind: storage.EntryTopUp, Reference: ref})
		if err != nil || e.Kind != storage.EntryTopUp || e.AmountCents != cents {
			t.Fatalf("top-up %s = %+v, %v; want a new top-up of %d", ref, e, err, cents)
		}
		return e
	}

	// The top-up first, then the request it names settles alone.
	first := topUp(storage.ChargeReferencePrefix+"r-1", 1000)
	u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", CostCents: 40})
	if err != nil || u.CostCents != 40 {
		t.Errorf("SettleUsage after a top-up spelt like its charge = cost %d, %v; want 40", u.CostCents, err)
	}
	wantBalance(t, s, a.ID, 960)

	// The same in a batch.
	topUp(storage.ChargeReferencePrefix+"b-1", 500)
	topUp(storage.ChargeReferencePrefix+"b-2", 500)
	got, err := s.SettleUsageBatch(ctx, []storage.UsageRecord{
		{AccountID: a.ID, RequestID: "b-1", CostCents: 5},
		{AccountID: a.ID, RequestID: "b-2", CostCents: 7},
	})
	if err != nil || len(got) != 2 {
		t.Fatalf("SettleUsageBatch = %+v, %v", got, err)
	}
	for i, want := range []int64{5, 7} {
		if got[i].Err != nil || got[i].Record.CostCents != want {
			t.Errorf("batch record %d = cost %d, %v; want %d", i, got[i].Record.CostCents, got[i].Err, want)
		}
	}
	wantBalance(t, s, a.ID, 960+1000-12)

	// The charge first: a top-up spelt like it is a top-up of its own.
	if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-2", CostCents: 3}); err != nil || u.CostCents != 3 {
		t.Fatalf("SettleUsage r-2 = %+v, %v", u, err)
	}
	topUp(storage.ChargeReferencePrefix+"r-2", 600)
	wantBalance(t, s, a.ID, 1948-3+600)

	// Within a kind a reference is still posted once.
	again, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 1000, Kind: storage.EntryTopUp, Reference: first.Reference})
	if !errors.Is(err, storage.ErrDuplicateReference) || !entriesEqual(again, first) {
		t.Errorf("the top-up posted again = %+v, %v; want the first, ErrDuplicateReference", again, err)
	}
	if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", CostCents: 99}); err != nil || u.CostCents != 40 {
		t.Errorf("r-1 settled again = cost %d, %v; want the first record's 40", u.CostCents, err)
	}
	wantBalance(t, s, a.ID, 2545)

	charges, err := s.Charges(ctx, a.ID, 0)
	if err != nil || len(charges) != 4 {
		t.Fatalf("Charges = %+v, %v; want 4", charges, err)
	}
	for _, c := range charges {
		if c.AmountCents >= 0 || c.Kind != storage.EntryCharge {
			t.Errorf("charge %+v: want a debit", c)
		}
	}
	all, err := s.Entries(ctx, a.ID, 0)
	if err != nil || len(all) != 8 {
		t.Fatalf("Entries = %d, %v; want 4 top-ups and 4 charges", len(all), err)
	}
	checkChain(t, all)
}

// checkChain reports every entry, of a ledger listed newest first, whose
// balance after does not follow from the entry before it.
func checkChain(t *testing.T, entries []storage.LedgerEntry) {
	t.Helper()
	for i, e := range entries {
		var before int64
		if i+1 < len(entries) {
			before = entries[i+1].BalanceAfterCents
		}
		if e.BalanceAfterCents != before+e.AmountCents {
			t.Errorf("entry %s: balance after %d, want %d + %d", e.Reference, e.BalanceAfterCents, before, e.AmountCents)
		}
	}
}

// entriesEqual compares entries with time.Time.Equal.
func entriesEqual(a, b storage.LedgerEntry) bool {
	ta, tb := a.CreatedAt, b.CreatedAt
	a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}
