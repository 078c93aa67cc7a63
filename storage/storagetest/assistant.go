package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/storage"
)

// RunAssistant runs the contract suite of the assistant's state against
// the stores open opens.
func RunAssistant(t *testing.T, open Opener) {
	h := &harness{open: open}
	t.Run("Memory", h.testMemory)
	t.Run("ObjectIDs", h.testObjectIDs)
	t.Run("Usage", h.testUsage)
	t.Run("UsageBatch", h.testUsageBatch)
	t.Run("UsageReports", h.testUsageReports)
}

func (h *harness) testMemory(t *testing.T) {
	t.Run("OrderDedupeAndBound", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		tests := []struct {
			name     string
			max      int
			remember []string
			want     []string
		}{
			{name: "oldest first", max: 5, remember: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
			{name: "an equal fact becomes the newest", max: 5, remember: []string{"a", "b", "c", "a"}, want: []string{"b", "c", "a"}},
			{name: "an equal fact at the bound drops nothing", max: 3, remember: []string{"a", "b", "c", "a"}, want: []string{"b", "c", "a"}},
			{name: "the oldest are dropped beyond max", max: 3, remember: []string{"a", "b", "c", "d", "e"}, want: []string{"c", "d", "e"}},
			{name: "a bound of one keeps the newest", max: 1, remember: []string{"a", "b"}, want: []string{"b"}},
			{name: "facts compare exactly", max: 5, remember: []string{"Likes tea", "likes tea", "Likes tea "}, want: []string{"Likes tea", "likes tea", "Likes tea "}},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				user := fmt.Sprint("user-", i)
				for _, f := range tt.remember {
					if err := s.Remember(t.Context(), a.ID, user, f, tt.max); err != nil {
						t.Fatalf("Remember(%q): %v", f, err)
					}
				}
				if got, err := s.Facts(t.Context(), a.ID, user); err != nil || !slices.Equal(got, tt.want) {
					t.Errorf("Facts = %q, %v; want %q", got, err, tt.want)
				}
			})
		}
		t.Run("a smaller max trims at once", func(t *testing.T) {
			for _, f := range []string{"a", "b", "c", "d"} {
				if err := s.Remember(t.Context(), a.ID, "shrinking", f, 10); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Remember(t.Context(), a.ID, "shrinking", "e", 2); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Facts(t.Context(), a.ID, "shrinking"); err != nil || !slices.Equal(got, []string{"d", "e"}) {
				t.Errorf("Facts = %q, %v; want [d e]", got, err)
			}
		})
	})

	t.Run("Isolation", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
		for _, r := range []struct{ account, user, fact string }{
			{a.ID, "u1", "x"},
			{a.ID, "u2", "y"},
			{b.ID, "u1", "z"},
			// The same fact for another end user is theirs alone.
			{a.ID, "u2", "x"},
		} {
			if err := s.Remember(ctx, r.account, r.user, r.fact, 2); err != nil {
				t.Fatalf("Remember(%s, %s, %q): %v", r.account, r.user, r.fact, err)
			}
		}
		// Filling u1's memory to its bound leaves u2's alone.
		for _, f := range []string{"p", "q"} {
			if err := s.Remember(ctx, b.ID, "u1", f, 2); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			name          string
			account, user string
			want          []string
		}{
			{"first end user", a.ID, "u1", []string{"x"}},
			{"second end user", a.ID, "u2", []string{"y", "x"}},
			{"same end user id in another account", b.ID, "u1", []string{"p", "q"}},
			{"end user known only to the other account", b.ID, "u2", []string{}},
			{"unknown end user", a.ID, "nobody", []string{}},
			{"unknown account", "acct_unknown", "u1", []string{}},
		}
		for _, tt := range tests {
			got, err := s.Facts(ctx, tt.account, tt.user)
			if err != nil || got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("%s: Facts = %#v, %v; want %q (not nil)", tt.name, got, err, tt.want)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		if err := s.Remember(ctx, "acct_unknown", "u1", "x", 5); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Remember for an unknown account: %v, want ErrNotFound", err)
		}
		tests := []struct {
			name       string
			user, fact string
			max        int
		}{
			{"no end user", "", "x", 5},
			{"empty fact", "u1", "", 5},
			{"zero max", "u1", "x", 0},
			{"negative max", "u1", "x", -1},
		}
		for _, tt := range tests {
			if err := s.Remember(ctx, a.ID, tt.user, tt.fact, tt.max); err == nil {
				t.Errorf("%s: Remember succeeded", tt.name)
			}
		}
		if got, err := s.Facts(ctx, a.ID, "u1"); err != nil || len(got) != 0 {
			t.Errorf("Facts after refused Remembers = %q, %v; want none", got, err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		ctx := t.Context()
		a := mustAccount(t, procs[0], "alice")

		// Every fact twice, at once: each is kept exactly once.
		errs := make([]error, 40)
		parallel(40, func(i int) {
			errs[i] = procs.pick(i).Remember(ctx, a.ID, "u1", fmt.Sprint("f", i%20), 50)
		})
		checkErrs(t, "Remember", errs)
		got, err := procs[0].Facts(ctx, a.ID, "u1")
		slices.Sort(got)
		var want []string
		for i := range 20 {
			want = append(want, fmt.Sprint("f", i))
		}
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("after concurrent duplicates, Facts = %q, %v; want each of %q once", got, err, want)
		}

		// New facts beyond the bound, at once: the newest ten remain,
		// all of them new.
		parallel(40, func(i int) {
			errs[i] = procs.pick(i).Remember(ctx, a.ID, "u1", fmt.Sprint("g", i), 10)
		})
		checkErrs(t, "Remember", errs)
		got, err = procs[1].Facts(ctx, a.ID, "u1")
		if err != nil || len(got) != 10 {
			t.Fatalf("after concurrent Remembers with max 10, Facts = %q, %v; want 10", got, err)
		}
		seen := make(map[string]bool)
		for _, f := range got {
			if f[0] != 'g' || seen[f] {
				t.Errorf("Facts = %q: want 10 different g facts", got)
				break
			}
			seen[f] = true
		}

		// End users remembering at the same time keep to their own.
		errs = make([]error, 20)
		parallel(20, func(i int) {
			user := fmt.Sprint("user-", i)
			for _, f := range []string{"one", "two", user} {
				if err := procs.pick(i).Remember(ctx, a.ID, user, f, 2); err != nil {
					errs[i] = err
					return
				}
			}
		})
		checkErrs(t, "Remember", errs)
		for i := range 20 {
			user := fmt.Sprint("user-", i)
			if got, err := procs[0].Facts(ctx, a.ID, user); err != nil || !slices.Equal(got, []string{"two", user}) {
				t.Errorf("Facts of %s = %q, %v; want [two %s]", user, got, err, user)
			}
		}
	})
}

func (h *harness) testObjectIDs(t *testing.T) {
	t.Run("Sequence", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
		steps := []struct {
			account string
			class   objectid.Class
			want    string
		}{
			{a.ID, objectid.Final, "obj1"},
			{a.ID, objectid.Final, "obj2"},
			{a.ID, objectid.Element, "el1"}, // classes count separately
			{b.ID, objectid.Final, "obj1"},  // and so do accounts
			{a.ID, objectid.Final, "obj3"},
			{a.ID, objectid.Element, "el2"},
			{b.ID, objectid.Element, "el1"},
		}
		for i, st := range steps {
			if got, err := s.NextObjectID(t.Context(), st.account, st.class); err != nil || got != st.want {
				t.Errorf("step %d: NextObjectID = %q, %v; want %q", i+1, got, err, st.want)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		if id, err := s.NextObjectID(t.Context(), "acct_unknown", objectid.Final); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("NextObjectID for an unknown account = %q, %v; want ErrNotFound", id, err)
		}
		if id, err := s.NextObjectID(t.Context(), a.ID, objectid.Class(7)); err == nil {
			t.Errorf("NextObjectID of an unknown class = %q, want an error", id)
		}
		if id, err := s.NextObjectID(t.Context(), a.ID, objectid.Final); err != nil || id != "obj1" {
			t.Errorf("first NextObjectID after refusals = %q, %v; want obj1", id, err)
		}
	})

	t.Run("States", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		for _, c := range []objectid.Class{objectid.Final, objectid.Final, objectid.Final, objectid.Element, objectid.Element} {
			if _, err := s.NextObjectID(ctx, a.ID, c); err != nil {
				t.Fatal(err)
			}
		}
		// obj1 is saved twice: the second version replaces the first.
		if old, err := s.SaveObject(ctx, a.ID, "obj1", "file-a"); err != nil || old != "" {
			t.Fatalf("first SaveObject = %q, %v; want nothing replaced", old, err)
		}
		if old, err := s.SaveObject(ctx, a.ID, "obj1", "file-b"); err != nil || old != "file-a" {
			t.Fatalf("second SaveObject = %q, %v; want file-a replaced", old, err)
		}
		if _, err := s.SaveObject(ctx, a.ID, "obj2", "file-c"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveObject(ctx, a.ID, "obj3", "file-d"); err != nil {
			t.Fatal(err)
		}
		// obj2 is deleted: its file is the caller's to delete.
		if freed, err := s.RetireObject(ctx, a.ID, "obj2", ""); err != nil || freed != "file-c" {
			t.Fatalf("RetireObject(obj2) = %q, %v; want file-c freed", freed, err)
		}
		// obj3 is folded in as el2: its file goes with it.
		if freed, err := s.RetireObject(ctx, a.ID, "obj3", "el2"); err != nil || freed != "" {
			t.Fatalf("RetireObject(obj3 to el2) = %q, %v; want nothing freed", freed, err)
		}
		// Retiring again changes nothing: no second rename.
		if freed, err := s.RetireObject(ctx, a.ID, "obj3", "el9"); err != nil || freed != "" {
			t.Fatalf("RetireObject(obj3) again = %q, %v", freed, err)
		}
		if _, err := s.SaveObject(ctx, a.ID, "obj2", "file-e"); !errors.Is(err, storage.ErrObjectRetired) {
			t.Errorf("SaveObject of a deleted object: %v, want ErrObjectRetired", err)
		}
		got, err := s.ObjectStates(ctx, a.ID, []string{"obj1", "obj2", "obj3", "el1", "el2", "obj4", "el3", "file-1"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]storage.ObjectState{
			"obj1":   {Issued: true, FileID: "file-b"},
			"obj2":   {Issued: true, Retired: true},
			"obj3":   {Issued: true, Retired: true, RenamedTo: "el2"},
			"el1":    {Issued: true},
			"el2":    {Issued: true, FileID: "file-d"},
			"obj4":   {},
			"el3":    {},
			"file-1": {},
		}
		if len(got) != len(want) {
			t.Errorf("ObjectStates returned %d entries, want %d: %+v", len(got), len(want), got)
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("state of %s = %+v, want %+v", id, got[id], w)
			}
		}
		// Another account was handed none of these.
		b := mustAccount(t, s, "bob")
		other, err := s.ObjectStates(ctx, b.ID, []string{"obj1"})
		if err != nil || other["obj1"].Issued {
			t.Errorf("bob's obj1 = %+v, %v; want not issued", other["obj1"], err)
		}
		if _, err := s.SaveObject(ctx, "acct_unknown", "obj1", "f"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("SaveObject for an unknown account: %v, want ErrNotFound", err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a, b := mustAccount(t, procs[0], "alice"), mustAccount(t, procs[0], "bob")
		type want struct {
			account string
			class   objectid.Class
		}
		// Each caller allocates this sequence; finals of alice twice, to
		// see that one caller's ids increase.
		sequence := []want{{a.ID, objectid.Final}, {a.ID, objectid.Element}, {a.ID, objectid.Final}, {b.ID, objectid.Final}}
		const callers = 50
		got := make([][]string, callers)
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			s := procs.pick(i)
			for _, w := range sequence {
				id, err := s.NextObjectID(t.Context(), w.account, w.class)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], id)
			}
		})
		checkErrs(t, "NextObjectID", errs)
		if t.Failed() {
			t.FailNow()
		}
		numbers := make(map[want][]int64)
		for i, ids := range got {
			var last int64
			for j, id := range ids {
				class, n, ok := objectid.Parse(id)
				if !ok || class != sequence[j].class {
					t.Fatalf("caller %d: id %q is not of class %d", i, id, sequence[j].class)
				}
				if sequence[j] == sequence[0] {
					if n <= last {
						t.Errorf("caller %d: %v do not increase", i, ids)
					}
					last = n
				}
				numbers[sequence[j]] = append(numbers[sequence[j]], n)
			}
		}
		// Every counter handed out 1..N, each number once.
		for w, ns := range numbers {
			slices.Sort(ns)
			for k, n := range ns {
				if n != int64(k+1) {
					t.Errorf("account %s class %d handed out %v, want 1..%d each once", w.account, w.class, ns, len(ns))
					break
				}
			}
		}
		if len(numbers[sequence[0]]) != 2*callers {
			t.Errorf("%d finals of alice, want %d", len(numbers[sequence[0]]), 2*callers)
		}
	})

	t.Run("NeverReused", func(t *testing.T) {
		ctx := t.Context()
		first := h.open(t, storage.Options{})
		a := mustAccount(t, first, "alice")
		for _, want := range []string{"obj1", "obj2"} {
			if id, err := first.NextObjectID(ctx, a.ID, objectid.Final); err != nil || id != want {
				t.Fatalf("NextObjectID = %q, %v; want %q", id, err, want)
			}
		}
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		// Neither reopening nor deleting the account starts over.
		s := h.store(t, storage.Options{})
		if err := s.DeleteAccount(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if id, err := s.NextObjectID(ctx, a.ID, objectid.Final); err != nil || id != "obj3" {
			t.Errorf("NextObjectID after reopening = %q, %v; want obj3", id, err)
		}
	})
}

// settle records u and returns the cost the store charged for it.
func settle(ctx context.Context, s storage.Usage, u storage.UsageRecord) (int64, error) {
	stored, err := s.SettleUsage(ctx, u)
	return stored.CostCents, err
}

func (h *harness) testUsage(t *testing.T) {

	t.Run("RecordAndCharge", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		k, _ := mustKey(t, s, a.ID)
		mustPost(t, s, a.ID, 1000, "topup-1")
		started := c.Advance(time.Second)
		finished := c.Advance(3 * time.Second)
		rec := storage.UsageRecord{
			AccountID: a.ID, KeyID: k.ID, RequestID: "r-1", EndUser: "u1", SessionID: "s1", Model: "svc-3", Upstream: "replica-b", Stream: true,
			PromptTokens: 12_345, CompletionTokens: 678, AnswerTokens: 400, Estimated: true,
			Rounds: 2, ToolCalls: 1, Outcome: storage.OutcomeCompleted, Started: started, Finished: finished,
			CostCents: 4,
		}
		const want = 4
		cost, err := settle(ctx, s, rec)
		if err != nil || cost != want {
			t.Fatalf("SettleUsage cost = %d, %v; want %d", cost, err, want)
		}

		records, err := s.UsageRecords(ctx, a.ID, 0)
		wantRecord := storage.UsageRecord{
			AccountID: a.ID, RequestID: "r-1", KeyID: k.ID, EndUser: "u1", SessionID: "s1", Model: "svc-3", Upstream: "replica-b", Stream: true,
			PromptTokens: 12_345, CompletionTokens: 678, AnswerTokens: 400, Estimated: true,
			Rounds: 2, ToolCalls: 1, Outcome: "completed", Started: started, Finished: finished,
			CostCents: want, RecordedAt: finished,
		}
		if err != nil || len(records) != 1 || !usageEqual(records[0], wantRecord) {
			t.Errorf("UsageRecords = %+v, %v; want [%+v]", records, err, wantRecord)
		}
		entries, err := s.Entries(ctx, a.ID, 0)
		if err != nil || len(entries) != 2 {
			t.Fatalf("Entries = %+v, %v; want the top-up and one charge", entries, err)
		}
		charge := entries[0]
		if charge.Kind != storage.EntryCharge || charge.AmountCents != -want || charge.BalanceAfterCents != 1000-want ||
			charge.Reference != "req:r-1" || !charge.CreatedAt.Equal(finished) {
			t.Errorf("charge = %+v; want kind charge, -%d, balance after %d, reference req:r-1", charge, want, 1000-want)
		}
		wantBalance(t, s, a.ID, 1000-want)
	})

	t.Run("ChargesChain", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		var balance int64
		for i, cost := range []int64{1, 2, 500, 0, 300_000} {
			got, err := settle(ctx, s, storage.UsageRecord{AccountID: a.ID, RequestID: fmt.Sprint("r-", i), CostCents: cost})
			if err != nil || got != cost {
				t.Errorf("request %d: SettleUsage cost = %d, %v; want %d", i, got, err, cost)
				continue
			}
			balance -= cost
			e, err := s.Entries(ctx, a.ID, 1)
			if err != nil || len(e) != 1 || e[0].AmountCents != -cost || e[0].BalanceAfterCents != balance {
				t.Errorf("request %d: newest entry %+v, %v; want %d with balance after %d", i, e, err, -cost, balance)
			}
		}
	})

	t.Run("RecordedTwice", func(t *testing.T) {
		s, c := h.clockedStore(t)
		ctx := t.Context()
		a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
		mustPost(t, s, a.ID, 1000, "topup-1")
		rec := storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", PromptTokens: 100_000, CompletionTokens: 10_000, CostCents: 40}
		first, err := settle(ctx, s, rec)
		if err != nil || first != 40 {
			t.Fatalf("SettleUsage cost = %d, %v; want 40", first, err)
		}
		before, _ := s.UsageRecords(ctx, a.ID, 0)

		// A retry, even with other counts, returns the first cost and
		// changes nothing.
		c.Advance(time.Minute)
		rec.PromptTokens, rec.Outcome, rec.CostCents = 900_000, storage.OutcomeFailed, 280
		if again, err := settle(ctx, s, rec); err != nil || again != first {
			t.Errorf("SettleUsage again = %d, %v; want %d", again, err, first)
		}
		after, err := s.UsageRecords(ctx, a.ID, 0)
		if err != nil || len(after) != 1 || len(before) != 1 || !usageEqual(after[0], before[0]) {
			t.Errorf("records after the retry = %+v, %v; want %+v", after, err, before)
		}
		if es, err := s.Entries(ctx, a.ID, 0); err != nil || len(es) != 2 {
			t.Errorf("Entries = %d, %v; want 2", len(es), err)
		}
		wantBalance(t, s, a.ID, 1000-first)

		// Request ids are unique per account only.
		rec.AccountID = b.ID
		if cost, err := settle(ctx, s, rec); err != nil || cost != 280 {
			t.Errorf("the same request id on another account: %d, %v; want 280", cost, err)
		}
		wantBalance(t, s, b.ID, -280)
	})

	t.Run("ConcurrentDuplicates", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		ctx := t.Context()
		a := mustAccount(t, procs[0], "alice")
		mustPost(t, procs[0], a.ID, 10_000, "topup-1")
		const callers, requests = 30, 10
		costs := make([]int64, callers)
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			s := procs.pick(i)
			// The copies of one request disagree on the cost, so that
			// a second charge or a mixed-up answer would show.
			costs[i], errs[i] = settle(ctx, s, storage.UsageRecord{
				AccountID: a.ID, RequestID: fmt.Sprint("r-", i%requests), CostCents: int64(1+i) * 30,
			})
		})
		checkErrs(t, "SettleUsage", errs)

		records, err := procs[0].UsageRecords(ctx, a.ID, 0)
		if err != nil || len(records) != requests {
			t.Fatalf("UsageRecords = %d, %v; want %d", len(records), err, requests)
		}
		recorded := make(map[string]int64)
		var total int64
		for _, u := range records {
			recorded[u.RequestID] = u.CostCents
			total += u.CostCents
		}
		for i, cost := range costs {
			if id := fmt.Sprint("r-", i%requests); cost != recorded[id] || cost == 0 {
				t.Errorf("caller %d was told %d for %s, which was recorded at %d", i, cost, id, recorded[id])
			}
		}
		entries, err := procs[1].Entries(ctx, a.ID, 0)
		if err != nil || len(entries) != requests+1 {
			t.Fatalf("Entries = %d, %v; want the top-up and %d charges", len(entries), err, requests)
		}
		checkChain(t, entries)
		for _, e := range entries {
			if e.Kind == storage.EntryCharge && -e.AmountCents != recorded[e.Reference[len("req:"):]] {
				t.Errorf("entry %s charged %d, the record says %d", e.Reference, -e.AmountCents, recorded[e.Reference[len("req:"):]])
			}
		}
		wantBalance(t, procs[1], a.ID, 10_000-total)
	})

	t.Run("AlreadyCharged", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: -7, Kind: storage.EntryCharge, Reference: "req:r-1"}); err != nil {
			t.Fatal(err)
		}
		u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", CostCents: 4})
		if err != nil || u.CostCents != 7 {
			t.Errorf("SettleUsage = %+v, %v; want the charge already posted, 7", u, err)
		}
		wantBalance(t, s, a.ID, -7)
	})

	t.Run("Accounts", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		_, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: "acct_unknown", RequestID: "r-1", CostCents: 1})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("SettleUsage for an unknown account: %v, want ErrNotFound", err)
		}
		// A request in flight when its account is deleted still settles.
		a := mustAccount(t, s, "alice")
		if err := s.DeleteAccount(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", CostCents: 3}); err != nil || u.CostCents != 3 {
			t.Errorf("SettleUsage for a deleted account = %+v, %v", u, err)
		}
		wantBalance(t, s, a.ID, -3)
	})

	t.Run("Refused", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		tests := []struct {
			name string
			u    storage.UsageRecord
		}{
			{"no request id", storage.UsageRecord{AccountID: a.ID, CostCents: 1}},
			{"negative cost", storage.UsageRecord{AccountID: a.ID, RequestID: "r-1", CostCents: -1}},
		}
		for _, tt := range tests {
			if _, err := s.SettleUsage(ctx, tt.u); err == nil {
				t.Errorf("%s: SettleUsage succeeded", tt.name)
			}
		}
		if rs, err := s.UsageRecords(ctx, a.ID, 0); err != nil || len(rs) != 0 {
			t.Errorf("UsageRecords = %+v, %v; want none", rs, err)
		}
		wantBalance(t, s, a.ID, 0)
	})

	t.Run("List", func(t *testing.T) {
		s, c := h.clockedStore(t)
		ctx := t.Context()
		a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
		for i, account := range []string{a.ID, a.ID, b.ID, a.ID} {
			finished := c.Advance(time.Second)
			mustSettle(t, s, storage.UsageRecord{
				AccountID: account, RequestID: fmt.Sprint("r-", i), Finished: finished, CostCents: 1,
			})
		}
		tests := []struct {
			name    string
			account string
			limit   int
			want    []string
		}{
			{"all, latest first", a.ID, 0, []string{"r-3", "r-1", "r-0"}},
			{"limited", a.ID, 2, []string{"r-3", "r-1"}},
			{"other account", b.ID, 0, []string{"r-2"}},
			{"unknown account", "acct_unknown", 0, nil},
		}
		for _, tt := range tests {
			rs, err := s.UsageRecords(ctx, tt.account, tt.limit)
			var got []string
			for _, u := range rs {
				got = append(got, u.RequestID)
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%s: UsageRecords = %v, %v; want %v", tt.name, got, err, tt.want)
			}
		}
	})
}

// usageEqual compares records with time.Time.Equal.
func usageEqual(a, b storage.UsageRecord) bool {
	times := func(u *storage.UsageRecord) [3]time.Time {
		t := [3]time.Time{u.Started, u.Finished, u.RecordedAt}
		u.Started, u.Finished, u.RecordedAt = time.Time{}, time.Time{}, time.Time{}
		return t
	}
	ta, tb := times(&a), times(&b)
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	return a == b
}

// reports returns the store's UsageReports, failing t if it has none.
func reports(t *testing.T, s storage.Store) storage.UsageReports {
	t.Helper()
	r, ok := s.(storage.UsageReports)
	if !ok {
		t.Fatalf("%T does not implement storage.UsageReports", s)
	}
	return r
}

// wantUsage checks the rows r reports for account; a nil want is no rows.
func wantUsage(t *testing.T, r storage.UsageReports, account string, q storage.UsageQuery, want []storage.UsageRow) {
	t.Helper()
	rows, err := r.UsageSummary(t.Context(), account, q)
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("UsageSummary(%s, %+v) = %+v, %v; want %+v", account, q, rows, err, want)
	}
}

func (h *harness) testUsageReports(t *testing.T) {
	// A day in UTC, and the same instants seen from UTC+2 and UTC-5, so
	// that grouping by local day would show.
	midnight := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	east := time.FixedZone("UTC+2", 2*60*60)
	west := time.FixedZone("UTC-5", -5*60*60)

	t.Run("Empty", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		r := reports(t, s)
		other := mustAccount(t, s, "bob")
		mustSettle(t, s, storage.UsageRecord{
			AccountID: other.ID, RequestID: "r-1", Finished: midnight, PromptTokens: 10, CostCents: 1,
		})
		for _, account := range []string{a.ID, "acct_unknown"} {
			for _, by := range []storage.UsageGrouping{storage.UsageByDay, storage.UsageByKey, storage.UsageByEndUser, storage.UsageByModel} {
				wantUsage(t, r, account, storage.UsageQuery{By: by}, nil)
			}
			if cs, err := r.Charges(t.Context(), account, 0); err != nil || len(cs) != 0 {
				t.Errorf("Charges(%s) = %+v, %v; want none", account, cs, err)
			}
		}
		if _, err := r.UsageSummary(t.Context(), a.ID, storage.UsageQuery{By: "route"}); err == nil {
			t.Error("UsageSummary by an unknown grouping succeeded")
		}
	})

	t.Run("ByDay", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		r := reports(t, s)
		a, b := mustAccount(t, s, "alice"), mustAccount(t, s, "bob")
		records := []storage.UsageRecord{
			// The last microsecond of 13 March in UTC, though already
			// 14 March at UTC+2.
			{AccountID: a.ID, RequestID: "r-1", Finished: midnight.Add(-time.Microsecond).In(east), PromptTokens: 100, CompletionTokens: 10, CostCents: 3},
			// The first instant of 14 March in UTC, still 13 March at UTC-5.
			{AccountID: a.ID, RequestID: "r-2", Finished: midnight.In(west), PromptTokens: 200, CompletionTokens: 20, CostCents: 5, Estimated: true},
			{AccountID: a.ID, RequestID: "r-3", Finished: midnight.Add(24*time.Hour - time.Microsecond), PromptTokens: 300, CompletionTokens: 30, CostCents: 7},
			{AccountID: a.ID, RequestID: "r-4", Finished: midnight.Add(24 * time.Hour), PromptTokens: 400, CompletionTokens: 40, CostCents: 11, Estimated: true},
			// Another account's record on the same day counts for it only.
			{AccountID: b.ID, RequestID: "r-5", Finished: midnight.Add(time.Hour), PromptTokens: 1000, CompletionTokens: 100, CostCents: 13},
		}
		for _, u := range records {
			mustSettle(t, s, u)
		}
		tests := []struct {
			name string
			q    storage.UsageQuery
			want []storage.UsageRow
		}{
			{
				name: "all days, oldest first, split at UTC midnight",
				q:    storage.UsageQuery{By: storage.UsageByDay},
				want: []storage.UsageRow{
					{Group: "2026-03-13", Requests: 1, PromptTokens: 100, CompletionTokens: 10, CostCents: 3},
					{Group: "2026-03-14", Requests: 2, PromptTokens: 500, CompletionTokens: 50, CostCents: 12, EstimatedRequests: 1},
					{Group: "2026-03-15", Requests: 1, PromptTokens: 400, CompletionTokens: 40, CostCents: 11, EstimatedRequests: 1},
				},
			},
			{
				name: "since is included, until is not",
				q:    storage.UsageQuery{By: storage.UsageByDay, Since: midnight, Until: midnight.Add(24 * time.Hour)},
				want: []storage.UsageRow{
					{Group: "2026-03-14", Requests: 2, PromptTokens: 500, CompletionTokens: 50, CostCents: 12, EstimatedRequests: 1},
				},
			},
			{
				name: "bounds in another zone are the same instants",
				q:    storage.UsageQuery{By: storage.UsageByDay, Since: midnight.Add(time.Microsecond).In(east)},
				want: []storage.UsageRow{
					{Group: "2026-03-14", Requests: 1, PromptTokens: 300, CompletionTokens: 30, CostCents: 7},
					{Group: "2026-03-15", Requests: 1, PromptTokens: 400, CompletionTokens: 40, CostCents: 11, EstimatedRequests: 1},
				},
			},
			{
				name: "an empty period",
				q:    storage.UsageQuery{By: storage.UsageByDay, Since: midnight.Add(48 * time.Hour)},
				want: nil,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantUsage(t, r, a.ID, tt.q, tt.want)
			})
		}
		wantUsage(t, r, b.ID, storage.UsageQuery{By: storage.UsageByDay},
			[]storage.UsageRow{{Group: "2026-03-14", Requests: 1, PromptTokens: 1000, CompletionTokens: 100, CostCents: 13}})
	})

	t.Run("BeforeTheEpoch", func(t *testing.T) {
		// Integer division truncates towards zero in SQL; days before
		// 1970 (the zero time.Time among them) must still round down.
		s, a := h.storeWithAlice(t, storage.Options{})
		r := reports(t, s)
		epoch := time.Unix(0, 0).UTC()
		for i, finished := range []time.Time{epoch.Add(-time.Microsecond), epoch.Add(-24*time.Hour - time.Microsecond), epoch, {}} {
			mustSettle(t, s, storage.UsageRecord{
				AccountID: a.ID, RequestID: fmt.Sprint("r-", i), Finished: finished, CostCents: int64(i + 1),
			})
		}
		wantUsage(t, r, a.ID, storage.UsageQuery{By: storage.UsageByDay}, []storage.UsageRow{
			{Group: "0001-01-01", Requests: 1, CostCents: 4},
			{Group: "1969-12-30", Requests: 1, CostCents: 2},
			{Group: "1969-12-31", Requests: 1, CostCents: 1},
			{Group: "1970-01-01", Requests: 1, CostCents: 3},
		})
	})

	t.Run("ByKeyAndEndUser", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		r := reports(t, s)
		k1, _ := mustKey(t, s, a.ID)
		k2, _ := mustKey(t, s, a.ID)
		records := []storage.UsageRecord{
			{KeyID: k1.ID, EndUser: "ann", PromptTokens: 100, CompletionTokens: 1, CostCents: 2},
			{KeyID: k1.ID, EndUser: "ann", PromptTokens: 200, CompletionTokens: 2, CostCents: 3, Estimated: true},
			{KeyID: k1.ID, EndUser: "", PromptTokens: 300, CompletionTokens: 3, CostCents: 4},
			{KeyID: k2.ID, EndUser: "ben", PromptTokens: 400, CompletionTokens: 4, CostCents: 20},
			{KeyID: "key_gone", EndUser: "ann", PromptTokens: 500, CompletionTokens: 5, CostCents: 1, Estimated: true},
			// Before the period: counted by no row below.
			{KeyID: k2.ID, EndUser: "ann", PromptTokens: 9000, CompletionTokens: 9, CostCents: 90, Finished: midnight.Add(-time.Hour)},
		}
		for i, u := range records {
			u.AccountID, u.RequestID = a.ID, fmt.Sprint("r-", i)
			if u.Finished.IsZero() {
				u.Finished = midnight.Add(time.Duration(i) * time.Minute)
			}
			mustSettle(t, s, u)
		}
		tests := []struct {
			name string
			by   storage.UsageGrouping
			want []storage.UsageRow
		}{
			{
				name: "by key, most charged first, with the hint",
				by:   storage.UsageByKey,
				want: []storage.UsageRow{
					{Group: k2.ID, KeyHint: k2.Hint, Requests: 1, PromptTokens: 400, CompletionTokens: 4, CostCents: 20},
					{Group: k1.ID, KeyHint: k1.Hint, Requests: 3, PromptTokens: 600, CompletionTokens: 6, CostCents: 9, EstimatedRequests: 1},
					{Group: "key_gone", Requests: 1, PromptTokens: 500, CompletionTokens: 5, CostCents: 1, EstimatedRequests: 1},
				},
			},
			{
				name: "by end user, requests without one together",
				by:   storage.UsageByEndUser,
				want: []storage.UsageRow{
					{Group: "ben", Requests: 1, PromptTokens: 400, CompletionTokens: 4, CostCents: 20},
					{Group: "ann", Requests: 3, PromptTokens: 800, CompletionTokens: 8, CostCents: 6, EstimatedRequests: 2},
					{Group: "", Requests: 1, PromptTokens: 300, CompletionTokens: 3, CostCents: 4},
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantUsage(t, r, a.ID, storage.UsageQuery{By: tt.by, Since: midnight}, tt.want)
			})
		}
		t.Run("every grouping has the same total", func(t *testing.T) {
			var totals []storage.UsageRow
			for _, by := range []storage.UsageGrouping{storage.UsageByDay, storage.UsageByKey, storage.UsageByEndUser} {
				rows, err := r.UsageSummary(t.Context(), a.ID, storage.UsageQuery{By: by})
				if err != nil {
					t.Fatal(err)
				}
				var sum storage.UsageRow
				for _, row := range rows {
					sum.Requests += row.Requests
					sum.PromptTokens += row.PromptTokens
					sum.CompletionTokens += row.CompletionTokens
					sum.CostCents += row.CostCents
					sum.EstimatedRequests += row.EstimatedRequests
				}
				totals = append(totals, sum)
			}
			want := storage.UsageRow{Requests: 6, PromptTokens: 10_500, CompletionTokens: 24, CostCents: 120, EstimatedRequests: 2}
			for i, got := range totals {
				if got != want {
					t.Errorf("grouping %d totals %+v; want %+v", i, got, want)
				}
			}
		})
	})

	t.Run("Charges", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		r := reports(t, s)
		mustPost(t, s, a.ID, 1000, "topup-1")
		for i := range 4 {
			mustSettle(t, s, storage.UsageRecord{AccountID: a.ID, RequestID: fmt.Sprint("r-", i), CostCents: int64(i + 1)})
		}
		if _, err := s.Post(t.Context(), storage.Entry{AccountID: a.ID, AmountCents: 2, Kind: storage.EntryRefund, Reference: "refund-1"}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name  string
			limit int
			want  []string
		}{
			{"all, newest first, charges only", 0, []string{"req:r-3", "req:r-2", "req:r-1", "req:r-0"}},
			{"limited", 2, []string{"req:r-3", "req:r-2"}},
		}
		for _, tt := range tests {
			cs, err := r.Charges(t.Context(), a.ID, tt.limit)
			var got []string
			for _, e := range cs {
				if e.Kind != storage.EntryCharge || e.AmountCents >= 0 {
					t.Errorf("%s: entry %+v is not a charge", tt.name, e)
				}
				got = append(got, e.Reference)
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("%s: Charges = %v, %v; want %v", tt.name, got, err, tt.want)
			}
		}
	})
}
