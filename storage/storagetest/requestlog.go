package storagetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testRequestLog(t *testing.T) {
	base := time.Date(2031, 3, 14, 15, 0, 0, 0, time.UTC)
	entry := func(i int) storage.RequestLogEntry {
		e := storage.RequestLogEntry{
			AccountID: "acct_a", KeyID: "key_1", At: base.Add(time.Duration(i) * time.Minute),
			RequestID: fmt.Sprintf("req-%d", i), ChargeID: fmt.Sprintf("chg_%d", i), EndUser: "u1",
			Route: "v1", Method: "POST", Path: "/v1/chat/completions", ModelAsked: "small", ModelServed: "small",
			Upstream: "10.0.0.1:80", Stream: i%2 == 0, Status: 200, PromptTokens: int64(10 + i),
			CompletionTokens: int64(20 + i), CostCents: int64(i), Estimated: i%3 == 0, ToolCalls: i % 4,
			Latency: time.Duration(i+1) * 1500 * time.Microsecond, FirstByte: time.Duration(i) * time.Millisecond,
		}
		switch i % 5 {
		case 1:
			e.KeyID = "key_2"
		case 2:
			e.EndUser = "u2"
		case 3:
			e.ModelAsked, e.ModelServed = "big", "big-fallback"
		case 4:
			e.Status, e.ErrorCode, e.ChargeID = 429, "rate_limited", ""
		}
		return e
	}

	t.Run("AppendManyAtOnce", func(t *testing.T) {
		// A batch large enough to go in one COPY where the store has it
		// reads back as it went in.
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		var all []storage.RequestLogEntry
		for i := range 50 {
			all = append(all, entry(i))
		}
		if err := s.AppendRequestLog(ctx, all); err != nil {
			t.Fatal(err)
		}
		got, err := s.RequestLogPage(ctx, "acct_a", storage.RequestLogQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(all) {
			t.Fatalf("RequestLogPage = %d entries, want %d", len(got), len(all))
		}
		for i, g := range got {
			want := all[len(all)-1-i]
			want.ID = g.ID
			if g != want {
				t.Errorf("entry %d = %+v\nwant %+v", i, g, want)
			}
		}
	})

	t.Run("AppendPageFilter", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		var all []storage.RequestLogEntry
		for i := range 10 {
			all = append(all, entry(i))
		}
		other := entry(3)
		other.AccountID = "acct_b"
		// Two batches, the second older than the first's newest, as two
		// nodes' writers may commit them.
		if err := s.AppendRequestLog(ctx, append(all[5:], other)); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRequestLog(ctx, all[:5]); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendRequestLog(ctx, nil); err != nil {
			t.Errorf("AppendRequestLog(nil) = %v", err)
		}

		got, err := s.RequestLogPage(ctx, "acct_a", storage.RequestLogQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(all) {
			t.Fatalf("RequestLogPage = %d entries, want %d", len(got), len(all))
		}
		for i, g := range got {
			want := all[len(all)-1-i]
			if !strings.HasPrefix(g.ID, "rq_") {
				t.Errorf("entry %d has id %q; want an rq_ id", i, g.ID)
			}
			want.ID = g.ID
			if g != want {
				t.Errorf("entry %d = %+v\nwant %+v", i, g, want)
			}
		}

		// Paging by cursor meets every entry once, newest first.
		var paged []string
		before := ""
		for range 10 {
			page, err := s.RequestLogPage(ctx, "acct_a", storage.RequestLogQuery{Limit: 3, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				paged = append(paged, e.RequestID)
			}
			if len(page) < 3 {
				break
			}
			before = page[len(page)-1].ID
		}
		if want := "req-9 req-8 req-7 req-6 req-5 req-4 req-3 req-2 req-1 req-0"; strings.Join(paged, " ") != want {
			t.Errorf("pages = %v; want %s", paged, want)
		}

		for _, c := range []struct {
			name string
			q    storage.RequestLogQuery
			want string
		}{
			{"key", storage.RequestLogQuery{KeyID: "key_2"}, "req-6 req-1"},
			{"end user", storage.RequestLogQuery{EndUser: "u2"}, "req-7 req-2"},
			{"model asked", storage.RequestLogQuery{Model: "big"}, "req-8 req-3"},
			{"model served", storage.RequestLogQuery{Model: "big-fallback"}, "req-8 req-3"},
			{"status", storage.RequestLogQuery{Status: 429}, "req-9 req-4"},
			{"status class", storage.RequestLogQuery{StatusClass: 4}, "req-9 req-4"},
			{"since until", storage.RequestLogQuery{Since: base.Add(2 * time.Minute), Until: base.Add(4 * time.Minute)}, "req-3 req-2"},
			{"combined", storage.RequestLogQuery{StatusClass: 2, KeyID: "key_1", Limit: 2}, "req-8 req-7"},
			{"nothing", storage.RequestLogQuery{Model: "none"}, ""},
		} {
			page, err := s.RequestLogPage(ctx, "acct_a", c.q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var ids []string
			for _, e := range page {
				ids = append(ids, e.RequestID)
			}
			if strings.Join(ids, " ") != c.want {
				t.Errorf("%s: got %v, want %s", c.name, ids, c.want)
			}
		}
		if b, err := s.RequestLogPage(ctx, "acct_b", storage.RequestLogQuery{}); err != nil || len(b) != 1 || b[0].RequestID != "req-3" {
			t.Errorf("acct_b's log = %+v, %v; want its one entry", b, err)
		}
	})

	t.Run("Prune", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		var all []storage.RequestLogEntry
		for i := range 6 {
			all = append(all, entry(i))
		}
		if err := s.AppendRequestLog(ctx, all); err != nil {
			t.Fatal(err)
		}
		n, err := s.PruneRequestLog(ctx, base.Add(3*time.Minute), 2)
		if err != nil || n != 2 {
			t.Fatalf("PruneRequestLog(limit 2) = %d, %v; want 2", n, err)
		}
		n, err = s.PruneRequestLog(ctx, base.Add(3*time.Minute), 0)
		if err != nil || n != 1 {
			t.Fatalf("PruneRequestLog(all) = %d, %v; want the 1 left before the cut", n, err)
		}
		left, err := s.RequestLogPage(ctx, "acct_a", storage.RequestLogQuery{})
		if err != nil || len(left) != 3 || left[2].RequestID != "req-3" {
			t.Errorf("after pruning: %+v, %v; want req-5 to req-3", left, err)
		}
	})

	t.Run("PruneAccountsInChunks", func(t *testing.T) {
		// The sweep goes account by account, in chunks that stop within
		// an account: every old entry of every account goes, no newer
		// one does, and a sweep that went through them all starts over.
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		accounts := []string{"acct_a", "acct_b", "acct_c"}
		var all []storage.RequestLogEntry
		for i := range 4 {
			for _, a := range accounts {
				e := entry(i)
				e.AccountID = a
				all = append(all, e)
			}
		}
		if err := s.AppendRequestLog(ctx, all); err != nil {
			t.Fatal(err)
		}
		cut := base.Add(3 * time.Minute) // entries 0 to 2 of each account
		sweep := func() (total int64, chunks int) {
			for {
				n, err := s.PruneRequestLog(ctx, cut, 2)
				if err != nil {
					t.Fatal(err)
				}
				total, chunks = total+n, chunks+1
				if n < 2 {
					return total, chunks
				}
			}
		}
		if total, chunks := sweep(); total != 9 || chunks != 5 {
			t.Errorf("sweep = %d entries in %d chunks; want 9 in 5", total, chunks)
		}
		for _, a := range accounts {
			left, err := s.RequestLogPage(ctx, a, storage.RequestLogQuery{})
			if err != nil || len(left) != 1 || left[0].RequestID != "req-3" {
				t.Errorf("%s after the sweep: %+v, %v; want req-3 alone", a, left, err)
			}
		}
		late := entry(1)
		late.AccountID = "acct_a"
		if err := s.AppendRequestLog(ctx, []storage.RequestLogEntry{late}); err != nil {
			t.Fatal(err)
		}
		if total, _ := sweep(); total != 1 {
			t.Errorf("the next sweep to the same time = %d entries; want the 1 appended since", total)
		}
	})

	t.Run("PruneBeforeTheEpoch", func(t *testing.T) {
		// The sweep finds entries by their ids, in which times before
		// the epoch (the zero time among them) sort after the others:
		// they go all the same, and first.
		s := h.store(t, storage.Options{})
		ctx := t.Context()
		epoch := time.Unix(0, 0)
		var all []storage.RequestLogEntry
		for i, at := range []time.Time{{}, epoch.Add(-time.Hour), epoch.Add(time.Hour), base} {
			e := entry(i)
			e.At = at
			all = append(all, e)
		}
		if err := s.AppendRequestLog(ctx, all); err != nil {
			t.Fatal(err)
		}
		prunes := []struct {
			before time.Time
			limit  int
			want   int64
		}{
			{epoch.Add(-time.Hour), 0, 1},    // the zero time
			{epoch.Add(2 * time.Hour), 1, 1}, // an hour before the epoch, the older of two
			{epoch, 0, 0},
			{base, 0, 1}, // an hour after the epoch
			{base.Add(time.Microsecond), 5, 1},
		}
		left := len(all)
		for _, p := range prunes {
			if n, err := s.PruneRequestLog(ctx, p.before, p.limit); err != nil || n != p.want {
				t.Errorf("PruneRequestLog(%v, %d) = %d, %v; want %d", p.before, p.limit, n, err, p.want)
			}
			left -= int(p.want)
			kept, err := s.RequestLogPage(ctx, "acct_a", storage.RequestLogQuery{})
			if err != nil || len(kept) != left {
				t.Fatalf("after PruneRequestLog(%v, %d): %d entries, %v; want %d", p.before, p.limit, len(kept), err, left)
			}
			for _, e := range kept {
				if !e.At.Before(p.before) {
					continue
				}
				if p.limit == 0 || e.At.Before(all[len(all)-left].At) {
					t.Errorf("after PruneRequestLog(%v, %d): kept %v, older than the ones pruned", p.before, p.limit, e.At)
				}
			}
		}
	})

	t.Run("UsageByModel", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		for i, m := range []string{"small", "big", "small"} {
			_, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: a.ID, KeyID: "key_1", RequestID: fmt.Sprintf("r%d", i),
				Model: m, PromptTokens: 10, CompletionTokens: int64(5 * (i + 1)), CostCents: int64(1 + 10*i),
				Outcome: storage.OutcomeCompleted, Started: base, Finished: base.Add(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.UsageSummary(ctx, a.ID, storage.UsageQuery{By: storage.UsageByModel})
		if err != nil {
			t.Fatal(err)
		}
		want := []storage.UsageRow{
			{Group: "small", Requests: 2, PromptTokens: 20, CompletionTokens: 20, CostCents: 22},
			{Group: "big", Requests: 1, PromptTokens: 10, CompletionTokens: 10, CostCents: 11},
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Errorf("UsageSummary by model = %+v; want %+v", rows, want)
		}
	})
}
