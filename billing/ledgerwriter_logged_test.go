package billing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// loggedStore is a store of charges that keeps the request log as well
// and writes a batch's entries in its charges' call, as
// storage.LoggedSettler says.
type loggedStore struct {
	*batchStore
	*logStore

	mu     sync.Mutex
	logged [][]string // request ids of the entries of each SettleUsageBatchLogged
	refuse bool       // the entries are refused, the charges settled
	panics bool       // SettleUsageBatchLogged panics
}

func newLoggedStore() *loggedStore {
	return &loggedStore{batchStore: newBatchStore(), logStore: &logStore{}}
}

func (s *loggedStore) SettleUsageBatchLogged(ctx context.Context, recs []storage.UsageRecord,
	entries []storage.RequestLogEntry) ([]storage.Settlement, error, error) {
	s.mu.Lock()
	refuse, panics := s.refuse, s.panics
	s.mu.Unlock()
	if panics {
		panic("settling with the log")
	}
	settled, err := s.batchStore.SettleUsageBatch(ctx, recs)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.RequestID)
	}
	s.mu.Lock()
	s.logged = append(s.logged, ids)
	s.mu.Unlock()
	if refuse {
		return settled, errors.New("entry refused"), nil
	}
	s.logStore.mu.Lock()
	s.logStore.entries = append(s.logStore.entries, entries...)
	s.logStore.mu.Unlock()
	return settled, nil, nil
}

func (s *loggedStore) loggedCalls() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logged)
}

// loggedBatchOfTwo has w settle r1 and r2 in one batch, with the entries
// e1 and e2 queued before them, closes w and returns the completions.
func loggedBatchOfTwo(t *testing.T, w *LedgerWriter) *completions {
	t.Helper()
	c := newCompletions()
	w.Log(storage.RequestLogEntry{RequestID: "e1"})
	w.Log(storage.RequestLogEntry{RequestID: "e2"})
	c.enqueue(w, "r1", 4)
	c.enqueue(w, "r2", 6) // a full batch: the writer takes both, and the entries
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c.all.Wait()
	for _, id := range []string{"r1", "r2"} {
		if got := c.got[id]; got.err != nil {
			t.Errorf("%s completed with %v", id, got.err)
		}
	}
	return c
}

func TestWriterLogsInTheChargesTransaction(t *testing.T) {
	store := newLoggedStore()
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: time.Hour, MaxBatch: 2}, never)
	loggedBatchOfTwo(t, w)
	if got := store.loggedCalls(); len(got) != 1 || !slices.Equal(got[0], []string{"e1", "e2"}) {
		t.Errorf("entries settled with the charges: %v; want [[e1 e2]]", got)
	}
	if appends, _ := store.logStore.snapshot(); len(appends) != 0 {
		t.Errorf("entries appended in transactions of their own as well: %v", appends)
	}
	if batches, _ := store.batchStore.snapshot(); len(batches) != 1 {
		t.Errorf("batches %v; want one", batches)
	}
	if n := w.DroppedLogEntries(); n != 0 {
		t.Errorf("DroppedLogEntries = %d; want 0", n)
	}
}

func TestWriterLoggedEntriesRefusedLoseNoCharge(t *testing.T) {
	store := newLoggedStore()
	store.refuse = true
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: time.Hour, MaxBatch: 2}, never)
	loggedBatchOfTwo(t, w)
	if _, settled := store.batchStore.snapshot(); settled["r1"] != 4 || settled["r2"] != 6 {
		t.Errorf("settled %v; want r1 charged 4 and r2 6", settled)
	}
	if n := w.DroppedLogEntries(); n != 2 {
		t.Errorf("DroppedLogEntries = %d; want the 2 refused", n)
	}
	if appends, _ := store.logStore.snapshot(); len(appends) != 0 {
		t.Errorf("refused entries appended again: %v", appends)
	}
}

func TestWriterLoggedPanicAppendsEntriesAlone(t *testing.T) {
	store := newLoggedStore()
	store.panics = true
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: time.Hour, MaxBatch: 2}, never)
	loggedBatchOfTwo(t, w)
	if _, settled := store.batchStore.snapshot(); settled["r1"] != 4 || settled["r2"] != 6 {
		t.Errorf("settled %v; want r1 and r2 settled one by one", settled)
	}
	if appends, _ := store.logStore.snapshot(); len(appends) != 1 || !slices.Equal(appends[0], []string{"e1", "e2"}) {
		t.Errorf("appended %v; want the entries in a transaction of their own", appends)
	}
}

func TestWriterLoggedGivenUpAppendsEntriesAlone(t *testing.T) {
	store := newLoggedStore()
	store.batchStore.fail = 1000
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: time.Hour, MaxBatch: 2,
		RetryFor: time.Millisecond}, never)
	c := newCompletions()
	w.Log(storage.RequestLogEntry{RequestID: "e1"})
	c.enqueue(w, "r1", 4)
	c.enqueue(w, "r2", 6)
	_ = w.Close()
	c.all.Wait()
	if got := c.got["r1"]; got.err == nil {
		t.Error("r1 completed without the batch's error")
	}
	if appends, _ := store.logStore.snapshot(); len(appends) != 1 {
		t.Errorf("appended %v; want the entry tried on its own", appends)
	}
}

func TestWriterEntriesAloneAppendOnTheirOwn(t *testing.T) {
	store := newLoggedStore()
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: 0}, never)
	w.Log(storage.RequestLogEntry{RequestID: "e1"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if appends, _ := store.logStore.snapshot(); len(appends) != 1 {
		t.Errorf("appended %v; want the entry without charges appended alone", appends)
	}
	if got := store.loggedCalls(); len(got) != 0 {
		t.Errorf("a transaction of charges without charges: %v", got)
	}
}

func TestWriterOtherRequestLogGetsItsEntries(t *testing.T) {
	store := newLoggedStore()
	other := &logStore{}
	w := newLedgerWriter(WriterConfig{Store: store, RequestLog: other, MaxDelay: time.Hour, MaxBatch: 2}, never)
	loggedBatchOfTwo(t, w)
	if got := store.loggedCalls(); len(got) != 0 {
		t.Errorf("entries for another request log settled with the charges: %v", got)
	}
	if appends, _ := other.snapshot(); len(appends) != 1 || !slices.Equal(appends[0], []string{"e1", "e2"}) {
		t.Errorf("the request log got %v; want [[e1 e2]]", appends)
	}
}

// On the embedded store, which is both the writer's store and its
// request log, a batch's charges and entries take one transaction.
func TestWriterOnSQLiteCommitsABatchOnce(t *testing.T) {
	st, account := sqliteAccount(t)
	w := newLedgerWriter(WriterConfig{Store: st, RequestLog: st, MaxDelay: time.Hour, MaxBatch: 3}, never)
	c := newCompletions()
	_, before, _ := sqlite.Counts()
	for _, id := range []string{"r1", "r2", "r3"} { // the third fills the batch
		w.Log(storage.RequestLogEntry{AccountID: account, RequestID: id, ChargeID: id, At: time.Now(), Status: 200})
		c.enqueueFor(w, account, id, 5)
	}
	c.all.Wait()
	if err := w.Close(); err != nil { // an entry appended on its own would be by now
		t.Fatal(err)
	}
	if _, after, _ := sqlite.Counts(); after-before != 1 {
		t.Errorf("%d write transactions for a batch of 3 charges and their entries; want 1", after-before)
	}
	if got := chargedIDs(t, st, account); len(got) != 3 {
		t.Errorf("charged %v; want r1, r2 and r3", got)
	}
	entries, err := st.RequestLogPage(t.Context(), account, storage.RequestLogQuery{})
	if err != nil || len(entries) != 3 {
		t.Errorf("RequestLogPage = %d entries, %v; want 3", len(entries), err)
	}
}

// The writer queues each batch's entries in the array of the batch
// before and hands the store its records in one array it keeps: every
// entry must still be written once, as it was logged, and every
// completion told its own record, batch after batch, whether the
// entries ride with the charges or go alone.
func TestWriterReusedArraysKeepEachBatchApart(t *testing.T) {
	for _, riding := range []bool{true, false} {
		store := newLoggedStore()
		cfg := WriterConfig{Store: store, RequestLog: store, MaxDelay: 0, MaxBatch: 3}
		if !riding {
			cfg.Store = store.batchStore
		}
		w := NewLedgerWriter(cfg)
		c := newCompletions()
		var want []string
		for i := range 40 {
			id := fmt.Sprint("r", i)
			want = append(want, id)
			w.Log(storage.RequestLogEntry{RequestID: id, ChargeID: id, CostCents: int64(i)})
			if i%4 != 3 { // some batches carry entries alone
				c.enqueue(w, id, int64(i))
			}
			if i%5 == 0 {
				c.all.Wait() // let a batch commit before the next is queued
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		c.all.Wait()
		store.logStore.mu.Lock()
		var got []string
		for _, e := range store.logStore.entries {
			if e.ChargeID != e.RequestID || e.CostCents != int64(len(got)) {
				t.Errorf("riding %v: entry %+v after %d others", riding, e, len(got))
			}
			got = append(got, e.RequestID)
		}
		store.logStore.mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("riding %v: entries written %v; want %v", riding, got, want)
		}
		for i, id := range want {
			if o, ok := c.got[id]; i%4 != 3 && (!ok || o.err != nil || o.cost != int64(i)) {
				t.Errorf("riding %v: %s completed with %+v (%v)", riding, id, o, ok)
			}
		}
	}
}
