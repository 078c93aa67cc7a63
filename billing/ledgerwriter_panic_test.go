package billing

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// panickyStore is an embedded SQLite store whose settlements panic: any
// that holds the poisoned request id, and, while panicNext is set, the
// next batch whatever it holds, as a bug in a driver or in the store's
// own code would.
type panickyStore struct {
	storage.Store
	poison    string
	panicNext atomic.Bool
	panics    atomic.Int32
}

func (s *panickyStore) SettleUsageBatch(ctx context.Context, recs []storage.UsageRecord) ([]storage.Settlement, error) {
	if s.panicNext.CompareAndSwap(true, false) {
		s.panics.Add(1)
		panic("store bug")
	}
	for _, r := range recs {
		if r.RequestID == s.poison {
			s.panics.Add(1)
			panic("store bug on " + r.RequestID)
		}
	}
	return s.Store.SettleUsageBatch(ctx, recs)
}

func (s *panickyStore) SettleUsage(ctx context.Context, r storage.UsageRecord) (storage.UsageRecord, error) {
	if r.RequestID == s.poison {
		s.panics.Add(1)
		panic("store bug on " + r.RequestID)
	}
	return s.Store.SettleUsage(ctx, r)
}

// sqliteAccount opens an embedded store with one account.
func sqliteAccount(t *testing.T) (storage.Store, string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ledger.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.EnsureAccount(t.Context(), "panics")
	if err != nil {
		t.Fatal(err)
	}
	return st, acct.ID
}

// chargedIDs returns the request ids the ledger of account was charged
// for, with the amounts.
func chargedIDs(t *testing.T, st storage.Store, account string) map[string]int64 {
	t.Helper()
	entries, err := st.Entries(context.Background(), account, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64)
	for _, e := range entries {
		if e.Kind == storage.EntryCharge {
			out[e.Reference[len(storage.ChargeReferencePrefix):]] = -e.AmountCents
		}
	}
	return out
}

// tick is an after func whose delays pass when the test sends on it.
type tick chan time.Time

func (c tick) after(time.Duration) <-chan time.Time { return c }

// enqueueFor queues a record of account through c.
func (c *completions) enqueueFor(w *LedgerWriter, account, id string, cost int64) {
	c.all.Add(1)
	w.Enqueue(storage.UsageRecord{AccountID: account, RequestID: id, Model: "m", CostCents: cost,
		Outcome: storage.OutcomeCompleted, Started: time.Now(), Finished: time.Now()},
		func(u storage.UsageRecord, err error) {
			c.mu.Lock()
			c.got[id] = outcome{u.CostCents, err}
			c.mu.Unlock()
			c.all.Done()
		})
}

func waitPending(t *testing.T, w *LedgerWriter) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); w.Pending() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Pending = %d; the writer stopped completing records", w.Pending())
		}
	}
}

// TestWriterSurvivesAPanickingStore: a batch whose transaction panics
// neither ends the process nor loses the batch or the writer. The batch
// is settled again record by record: the records that settle alone are
// charged, the one that panics again fails alone with the panic as its
// error, and the records queued later are committed as usual.
func TestWriterSurvivesAPanickingStore(t *testing.T) {
	sql, account := sqliteAccount(t)
	st := &panickyStore{Store: sql, poison: "poison"}
	recovered := guard.Count(writerGoroutine)
	ticks := make(tick)
	w := newLedgerWriter(WriterConfig{Store: st, MaxDelay: time.Hour, MaxBatch: 10}, ticks.after)
	defer w.Close()
	c := newCompletions()

	for i, id := range []string{"r-1", "poison", "r-2"} {
		c.enqueueFor(w, account, id, int64(i+1))
	}
	ticks <- time.Now() // the three go in one batch, which panics
	c.all.Wait()
	if got := c.got["poison"]; got.err == nil {
		t.Errorf("the record whose settlement panics: %+v, want an error", got)
	}
	for _, id := range []string{"r-1", "r-2"} {
		if got := c.got[id]; got.err != nil {
			t.Errorf("%s, in the batch that panicked: %v; want it settled on its own", id, got.err)
		}
	}

	// A panic on a batch that holds nothing wrong (it does not come back
	// when its records are settled one by one).
	st.panicNext.Store(true)
	c.enqueueFor(w, account, "r-3", 4)
	c.enqueueFor(w, account, "r-4", 5)
	ticks <- time.Now()
	c.all.Wait()
	// And the writer goes on as before.
	c.enqueueFor(w, account, "r-5", 6)
	ticks <- time.Now()
	c.all.Wait()
	waitPending(t, w)

	want := map[string]int64{"r-1": 1, "r-2": 3, "r-3": 4, "r-4": 5, "r-5": 6}
	got := chargedIDs(t, sql, account)
	if len(got) != len(want) {
		t.Errorf("ledger charges %v, want %v", got, want)
	}
	for id, cents := range want {
		if got[id] != cents {
			t.Errorf("charge of %s: %d cents, want %d (ledger %v)", id, got[id], cents, got)
		}
		if o := c.got[id]; o.err != nil || o.cost != cents {
			t.Errorf("completion of %s: %+v", id, o)
		}
	}
	if st.panics.Load() != 3 {
		t.Errorf("the store panicked %d times; the test meant 3", st.panics.Load())
	}
	if got := guard.Count(writerGoroutine) - recovered; got != uint64(st.panics.Load()) {
		t.Errorf("%d panics counted for the writer, want the store's %d", got, st.panics.Load())
	}
}

// TestWriterSurvivesAPanickingCompletion: a completion that panics (a
// metric that refuses a value, say) ends neither the process nor the
// completions of the rest of its batch, and later records are still
// committed and completed.
func TestWriterSurvivesAPanickingCompletion(t *testing.T) {
	sql, account := sqliteAccount(t)
	ticks := make(tick)
	w := newLedgerWriter(WriterConfig{Store: sql, MaxDelay: time.Hour}, ticks.after)
	defer w.Close()
	c := newCompletions()

	recovered := guard.Count(completionsGoroutine)
	var ran atomic.Int32
	c.all.Add(1)
	w.Enqueue(storage.UsageRecord{AccountID: account, RequestID: "bad-completion", Model: "m", CostCents: 2,
		Outcome: storage.OutcomeCompleted, Started: time.Now(), Finished: time.Now()},
		func(storage.UsageRecord, error) {
			ran.Add(1)
			c.all.Done()
			panic("counter cannot decrease in value")
		})
	c.enqueueFor(w, account, "after-it", 3)
	ticks <- time.Now()
	c.all.Wait()
	c.enqueueFor(w, account, "later", 4)
	ticks <- time.Now()
	c.all.Wait()
	waitPending(t, w)

	if ran.Load() != 1 {
		t.Errorf("the panicking completion ran %d times, want once", ran.Load())
	}
	for id, cents := range map[string]int64{"after-it": 3, "later": 4} {
		if o := c.got[id]; o.err != nil || o.cost != cents {
			t.Errorf("completion of %s: %+v", id, o)
		}
	}
	got := chargedIDs(t, sql, account)
	if got["bad-completion"] != 2 || got["after-it"] != 3 || got["later"] != 4 {
		t.Errorf("ledger charges %v", got)
	}
	if n := guard.Count(completionsGoroutine) - recovered; n != 1 {
		t.Errorf("%d panics of completions counted, want 1", n)
	}
}

// TestWriterRestartsAfterAPanic: a panic in the writer's own loop, outside
// any transaction, starts the loop again; the records still queued are
// committed.
func TestWriterRestartsAfterAPanic(t *testing.T) {
	sql, account := sqliteAccount(t)
	recovered := guard.Count(writerGoroutine)
	var calls atomic.Int32
	after := func(time.Duration) <-chan time.Time {
		if calls.Add(1) == 1 {
			panic("clock bug")
		}
		return time.After(time.Millisecond)
	}
	w := newLedgerWriter(WriterConfig{Store: sql, MaxDelay: time.Millisecond}, after)
	defer w.Close()
	c := newCompletions()
	c.enqueueFor(w, account, "r-1", 1)
	c.enqueueFor(w, account, "r-2", 2)
	c.all.Wait()
	waitPending(t, w)
	for id, cents := range map[string]int64{"r-1": 1, "r-2": 2} {
		if o := c.got[id]; o.err != nil || o.cost != cents {
			t.Errorf("completion of %s: %+v", id, o)
		}
	}
	if got := chargedIDs(t, sql, account); got["r-1"] != 1 || got["r-2"] != 2 {
		t.Errorf("ledger charges %v", got)
	}
	if n := guard.Count(writerGoroutine) - recovered; n != 1 {
		t.Errorf("%d panics of the writer counted, want 1", n)
	}
}
