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
)

// batchStore is a storage.Usage that records the batches it settles.
// While gate is set, every batch waits for a value on it; fail fails the
// next batches as a whole; badRequest fails that record alone.
type batchStore struct {
	mu         sync.Mutex
	batches    [][]string
	settled    map[string]int64
	gate       chan struct{}
	entered    chan int // the size of each batch as it starts, when set
	fail       int
	badRequest string
}

func newBatchStore() *batchStore { return &batchStore{settled: make(map[string]int64)} }

func (s *batchStore) SettleUsage(ctx context.Context, u storage.UsageRecord) (storage.UsageRecord, error) {
	got, err := s.SettleUsageBatch(ctx, []storage.UsageRecord{u})
	if err != nil {
		return storage.UsageRecord{}, err
	}
	return got[0].Record, got[0].Err
}

func (s *batchStore) SettleUsageBatch(_ context.Context, recs []storage.UsageRecord) ([]storage.Settlement, error) {
	if s.entered != nil {
		s.entered <- len(recs)
	}
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return nil, errors.New("database unreachable")
	}
	var ids []string
	out := make([]storage.Settlement, len(recs))
	for i, u := range recs {
		ids = append(ids, u.RequestID)
		if u.RequestID == s.badRequest {
			out[i].Err = errors.New("refused")
			continue
		}
		if cost, ok := s.settled[u.RequestID]; ok {
			u.CostCents = cost
		} else {
			s.settled[u.RequestID] = u.CostCents
		}
		out[i].Record = u
	}
	s.batches = append(s.batches, ids)
	return out, nil
}

func (s *batchStore) UsageRecords(context.Context, string, int) ([]storage.UsageRecord, error) {
	return nil, errors.New("batchStore keeps no listing")
}

func (s *batchStore) snapshot() ([][]string, map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches), maps(s.settled)
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// outcome is what a completion was told.
type outcome struct {
	cost int64
	err  error
}

// completions collects what the completions of a test's records were
// told, by request id.
type completions struct {
	mu  sync.Mutex
	got map[string]outcome
	all sync.WaitGroup
}

func newCompletions() *completions { return &completions{got: make(map[string]outcome)} }

func (c *completions) enqueue(w *LedgerWriter, id string, cost int64) {
	c.all.Add(1)
	w.Enqueue(storage.UsageRecord{AccountID: "acct_1", RequestID: id, CostCents: cost}, func(u storage.UsageRecord, err error) {
		c.mu.Lock()
		if _, twice := c.got[id]; twice {
			panic("completion called twice for " + id)
		}
		c.got[id] = outcome{u.CostCents, err}
		c.mu.Unlock()
		c.all.Done()
	})
}

func (c *completions) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

// never is an after func whose delay never passes.
func never(time.Duration) <-chan time.Time { return nil }

func TestWriterGroupsRecordsQueuedDuringACommit(t *testing.T) {
	store := newBatchStore()
	store.gate, store.entered = make(chan struct{}), make(chan int, 100)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0, MaxBatch: 4}, never)
	defer w.Close()
	c := newCompletions()

	c.enqueue(w, "r-0", 1)
	if n := <-store.entered; n != 1 {
		t.Fatalf("first batch of %d records, want the one queued", n)
	}
	// While that transaction runs, ten more requests finish.
	for i := 1; i <= 10; i++ {
		c.enqueue(w, fmt.Sprint("r-", i), int64(i))
	}
	if n := c.count(); n != 0 {
		t.Fatalf("%d completions ran before any commit", n)
	}
	store.gate <- struct{}{}
	for range 3 {
		if n := <-store.entered; n != 4 && n != 2 {
			t.Errorf("a batch of %d records; want MaxBatch (4) and then the rest (2)", n)
		}
		store.gate <- struct{}{}
	}
	c.all.Wait()
	batches, settled := store.snapshot()
	if len(batches) != 4 || len(settled) != 11 {
		t.Fatalf("batches %v; want 4 transactions for 11 records", batches)
	}
	for i := range 11 {
		id := fmt.Sprint("r-", i)
		if got := c.got[id]; got.err != nil || got.cost != int64(max(i, 1)) || got.cost != settled[id] {
			t.Errorf("%s completed with %+v; settled at %d", id, got, settled[id])
		}
	}
	// In queue order.
	var order []string
	for _, b := range batches {
		order = append(order, b...)
	}
	for i, id := range order {
		if id != fmt.Sprint("r-", i) {
			t.Fatalf("settled in the order %v", order)
		}
	}
}

func TestWriterWaitsAtMostMaxDelay(t *testing.T) {
	store := newBatchStore()
	fire := make(chan time.Time)
	var asked []time.Duration
	var mu sync.Mutex
	after := func(d time.Duration) <-chan time.Time {
		mu.Lock()
		asked = append(asked, d)
		mu.Unlock()
		return fire
	}
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 3 * time.Millisecond, MaxBatch: 100}, after)
	defer w.Close()
	c := newCompletions()
	c.enqueue(w, "r-0", 1)
	c.enqueue(w, "r-1", 2)
	// The delay has not passed: nothing is committed and no hold could be
	// released. This is the window a crash loses (docs/billing.md).
	time.Sleep(20 * time.Millisecond)
	if batches, _ := store.snapshot(); len(batches) != 0 || c.count() != 0 {
		t.Fatalf("committed %v before the delay passed", batches)
	}
	fire <- time.Time{}
	c.all.Wait()
	batches, _ := store.snapshot()
	if len(batches) != 1 || len(batches[0]) != 2 {
		t.Errorf("batches %v; want both records in one", batches)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != 3*time.Millisecond {
		t.Errorf("waited %v; want one wait of MaxDelay", asked)
	}
}

func TestWriterFullBatchDoesNotWait(t *testing.T) {
	store := newBatchStore()
	store.gate, store.entered = make(chan struct{}), make(chan int, 100)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: time.Hour, MaxBatch: 3}, time.After)
	c := newCompletions()
	c.enqueue(w, "r-0", 1)
	// The first record waits for company; two more fill the batch.
	c.enqueue(w, "r-1", 1)
	c.enqueue(w, "r-2", 1)
	if n := <-store.entered; n != 3 {
		t.Fatalf("batch of %d; want a full batch of 3 without waiting out the hour", n)
	}
	store.gate <- struct{}{}
	c.all.Wait()
	store.gate = nil
	// Closing does not wait out the delay either.
	c.enqueue(w, "r-3", 1)
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	if n := <-store.entered; n != 1 {
		t.Errorf("batch of %d at Close, want 1", n)
	}
	<-closed
	c.all.Wait()
}

func TestWriterBackpressure(t *testing.T) {
	store := newBatchStore()
	store.gate, store.entered = make(chan struct{}), make(chan int, 100)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0, MaxBatch: 10, QueueSize: 2}, never)
	c := newCompletions()
	c.enqueue(w, "r-0", 1)
	<-store.entered // the writer is busy with r-0
	c.enqueue(w, "r-1", 1)
	c.enqueue(w, "r-2", 1) // the queue is full now
	returned := make(chan struct{})
	go func() { c.enqueue(w, "r-3", 1); close(returned) }()
	select {
	case <-returned:
		t.Fatal("Enqueue returned with the queue full: a record was dropped or the queue is unbounded")
	case <-time.After(30 * time.Millisecond):
	}
	// r-0 commits; the writer takes what is queued, and r-3 gets in.
	stop := openGate(store.gate)
	<-returned
	c.all.Wait()
	stop()
	if _, settled := store.snapshot(); len(settled) != 4 {
		t.Errorf("settled %v; want all four", settled)
	}
	w.Close()
}

// openGate lets every batch through gate until stop is called.
func openGate(gate chan struct{}) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case gate <- struct{}{}:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func TestWriterCloseCommitsEverythingQueued(t *testing.T) {
	store := newBatchStore()
	store.gate = make(chan struct{})
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: time.Hour, MaxBatch: 7}, time.After)
	c := newCompletions()
	for i := range 50 {
		c.enqueue(w, fmt.Sprint("r-", i), 1)
	}
	stop := openGate(store.gate)
	w.Close()
	stop()
	if n := c.count(); n != 50 {
		t.Fatalf("Close returned with %d of 50 completions run", n)
	}
	batches, settled := store.snapshot()
	if len(settled) != 50 {
		t.Fatalf("settled %d of 50", len(settled))
	}
	for _, b := range batches {
		if len(b) > 7 {
			t.Errorf("a batch of %d, over MaxBatch", len(b))
		}
	}
	// After Close a record settles on its own, before Enqueue returns.
	store.gate = nil
	c.enqueue(w, "late", 9)
	if got, ok := c.got["late"]; !ok || got.cost != 9 || got.err != nil {
		t.Errorf("a record after Close: %+v, %v", got, ok)
	}
	w.Close()
}

// TestWriterBacklogDrainsInOrder: a backlog far larger than a batch, built
// while a commit hangs, is settled in queue order, and the queue does not
// keep the backlog's array once it has drained.
func TestWriterBacklogDrainsInOrder(t *testing.T) {
	store := newBatchStore()
	store.gate, store.entered = make(chan struct{}), make(chan int, 1000)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0, MaxBatch: 64}, never)
	c := newCompletions()
	c.enqueue(w, "r-0", 1)
	<-store.entered // the writer hangs in its first commit
	const backlog = 3000
	for i := 1; i <= backlog; i++ {
		c.enqueue(w, fmt.Sprint("r-", i), 1)
	}
	stop := openGate(store.gate)
	c.all.Wait()
	stop()
	batches, settled := store.snapshot()
	if len(settled) != backlog+1 {
		t.Fatalf("settled %d of %d", len(settled), backlog+1)
	}
	next := 0
	for _, b := range batches {
		if len(b) > 64 {
			t.Fatalf("a batch of %d, over MaxBatch", len(b))
		}
		for _, id := range b {
			if id != fmt.Sprint("r-", next) {
				t.Fatalf("settled %s where r-%d was next", id, next)
			}
			next++
		}
	}
	w.mu.Lock()
	kept := cap(w.queued)
	w.mu.Unlock()
	if kept > 1024 {
		t.Errorf("the drained queue keeps an array of %d records", kept)
	}
	w.Close()
}

func TestWriterRetriesABatchTheDatabaseRefused(t *testing.T) {
	store := newBatchStore()
	store.fail = 2
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0, RetryFor: time.Minute}, never)
	defer w.Close()
	c := newCompletions()
	c.enqueue(w, "r-0", 5)
	c.all.Wait()
	if got := c.got["r-0"]; got.err != nil || got.cost != 5 {
		t.Errorf("completion %+v; want the charge committed on the third attempt", got)
	}

	// A database that stays down: the records are given up with the
	// error after RetryFor, and the next batch gets one attempt.
	store.fail = 1 << 30
	w.retryFor = 50 * time.Millisecond
	start := time.Now()
	c.enqueue(w, "r-1", 5)
	c.all.Wait()
	if got := c.got["r-1"]; got.err == nil {
		t.Errorf("completion %+v; want the database's error", got)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("given up after %s, before RetryFor", d)
	}
	before := store.fail
	c.enqueue(w, "r-2", 5)
	c.all.Wait()
	if tries := before - store.fail; tries != 1 || c.got["r-2"].err == nil {
		t.Errorf("%d attempts for the next batch while the database stays down; want 1", tries)
	}
	store.fail = 0
	c.enqueue(w, "r-3", 5)
	c.all.Wait()
	if got := c.got["r-3"]; got.err != nil {
		t.Errorf("once the database is back: %+v", got)
	}
}

func TestWriterBadRecordFailsAlone(t *testing.T) {
	store := newBatchStore()
	store.badRequest = "bad"
	store.gate, store.entered = make(chan struct{}), make(chan int, 100)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0}, never)
	defer w.Close()
	c := newCompletions()
	c.enqueue(w, "first", 1)
	<-store.entered
	for _, id := range []string{"r-1", "bad", "r-2"} {
		c.enqueue(w, id, 1)
	}
	store.gate <- struct{}{}
	<-store.entered
	store.gate <- struct{}{}
	c.all.Wait()
	for id, got := range c.got {
		if (got.err != nil) != (id == "bad") {
			t.Errorf("%s: %+v", id, got)
		}
	}
}

func TestRecorderSettle(t *testing.T) {
	store := newBatchStore()
	store.gate = make(chan struct{})
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0}, never)
	defer w.Close()
	r := &Recorder{Store: store, Profile: pricedModels(nil), Writer: w}
	rec := storage.UsageRecord{AccountID: "acct_1", RequestID: "r-1", Model: "m", PromptTokens: 5000, CompletionTokens: 1000}
	done := make(chan outcome, 1)
	// The price comes back while the transaction has not even finished.
	if cost := r.Settle(rec, func(c int64, err error) { done <- outcome{c, err} }); cost != 3 {
		t.Errorf("Settle = %d, want the price, 3", cost)
	}
	select {
	case got := <-done:
		t.Fatalf("completion %+v before the commit", got)
	case <-time.After(10 * time.Millisecond):
	}
	if n := w.Pending(); n != 1 {
		t.Errorf("Pending = %d with one record in a transaction, want 1", n)
	}
	store.gate <- struct{}{}
	if got := <-done; got.cost != 3 || got.err != nil {
		t.Errorf("completion %+v, want 3 charged", got)
	}
	for deadline := time.Now().Add(5 * time.Second); w.Pending() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Pending = %d after the completion", w.Pending())
		}
	}

	// Without a writer: committed before Settle returns.
	store.gate = nil
	r.Writer = nil
	rec.RequestID = "r-2"
	if cost := r.Settle(rec, func(c int64, err error) { done <- outcome{c, err} }); cost != 3 {
		t.Errorf("Settle = %d, want 3", cost)
	}
	select {
	case got := <-done:
		if got.cost != 3 || got.err != nil {
			t.Errorf("completion %+v", got)
		}
	default:
		t.Error("Settle without a writer returned before its completion")
	}
	store.badRequest = "r-3"
	rec.RequestID = "r-3"
	r.Settle(rec, func(c int64, err error) { done <- outcome{c, err} })
	if got := <-done; got.err == nil || got.cost != 0 {
		t.Errorf("completion of a refused record: %+v", got)
	}
}
