package billing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/storage"
)

// logStore is a storage.RequestLog in memory. settled, when set, is
// read at every append, to see which charges had committed by then.
type logStore struct {
	mu       sync.Mutex
	appends  [][]string // request ids of each AppendRequestLog
	entries  []storage.RequestLogEntry
	charges  *batchStore
	seen     []int // charges committed at each append
	fail     bool
	prunedAt []time.Time
}

func (s *logStore) AppendRequestLog(_ context.Context, entries []storage.RequestLogEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("disk full")
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.RequestID)
	}
	s.appends = append(s.appends, ids)
	s.entries = append(s.entries, entries...)
	if s.charges != nil {
		_, settled := s.charges.snapshot()
		s.seen = append(s.seen, len(settled))
	}
	return nil
}

func (s *logStore) RequestLogPage(context.Context, string, storage.RequestLogQuery) ([]storage.RequestLogEntry, error) {
	return nil, nil
}

func (s *logStore) PruneRequestLog(_ context.Context, before time.Time, _ int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prunedAt = append(s.prunedAt, before)
	var kept []storage.RequestLogEntry
	for _, e := range s.entries {
		if !e.At.Before(before) {
			kept = append(kept, e)
		}
	}
	n := len(s.entries) - len(kept)
	s.entries = kept
	return int64(n), nil
}

func (s *logStore) snapshot() (appends [][]string, seen []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.appends...), append([]int(nil), s.seen...)
}

func TestWriterAppendsRequestLogAfterTheCharges(t *testing.T) {
	charges := newBatchStore()
	charges.gate = make(chan struct{})
	charges.entered = make(chan int, 10)
	logs := &logStore{charges: charges}
	w := newLedgerWriter(WriterConfig{Store: charges, MaxDelay: 0, MaxBatch: 8, RequestLog: logs}, never)
	c := newCompletions()

	c.enqueue(w, "r1", 5)
	w.Log(storage.RequestLogEntry{RequestID: "r1", ChargeID: "r1"})
	<-charges.entered // the batch is in its transaction, its entry waits
	w.Log(storage.RequestLogEntry{RequestID: "refused", Status: 429})
	if appends, _ := logs.snapshot(); len(appends) != 0 {
		t.Fatalf("entries appended while their batch's charges were uncommitted: %v", appends)
	}
	charges.gate <- struct{}{}
	stop := openGate(charges.gate)
	defer stop()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	appends, seen := logs.snapshot()
	var all []string
	for _, a := range appends {
		all = append(all, a...)
	}
	if len(all) != 2 || all[0] != "r1" || all[1] != "refused" {
		t.Errorf("appended %v; want r1 then refused", appends)
	}
	if len(seen) == 0 || seen[0] != 1 {
		t.Errorf("charges committed at the first append: %v; want 1", seen)
	}
	if c.count() != 1 {
		t.Errorf("%d completions; want 1", c.count())
	}
}

func TestWriterRequestLogAloneWakesTheWriter(t *testing.T) {
	logs := &logStore{}
	w := newLedgerWriter(WriterConfig{Store: newBatchStore(), MaxDelay: 0, RequestLog: logs}, never)
	defer w.Close()
	w.Log(storage.RequestLogEntry{RequestID: "a"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if appends, _ := logs.snapshot(); len(appends) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an entry queued alone was not appended")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWriterRequestLogFailureCostsNoCharge(t *testing.T) {
	charges := newBatchStore()
	logs := &logStore{fail: true}
	w := newLedgerWriter(WriterConfig{Store: charges, MaxDelay: 0, RequestLog: logs}, never)
	c := newCompletions()
	c.enqueue(w, "r1", 7)
	w.Log(storage.RequestLogEntry{RequestID: "r1"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, settled := charges.snapshot(); settled["r1"] != 7 {
		t.Errorf("settled %v; want r1 charged 7", settled)
	}
	if got := w.DroppedLogEntries(); got != 1 {
		t.Errorf("DroppedLogEntries = %d; want 1", got)
	}
}

func TestWriterRequestLogQueueDropsWhenFull(t *testing.T) {
	charges := newBatchStore()
	charges.gate = make(chan struct{})
	charges.entered = make(chan int, 10)
	logs := &logStore{}
	w := newLedgerWriter(WriterConfig{Store: charges, MaxDelay: 0, QueueSize: 2, RequestLog: logs}, never)
	c := newCompletions()
	c.enqueue(w, "r1", 1)
	<-charges.entered // the writer is busy: entries pile up
	for range 5 {
		w.Log(storage.RequestLogEntry{RequestID: "x"})
	}
	if got := w.DroppedLogEntries(); got != 3 {
		t.Errorf("DroppedLogEntries = %d; want 3 of 5 past a queue of 2", got)
	}
	stop := openGate(charges.gate)
	defer stop()
	_ = w.Close()
}

func TestWriterSweepsExpiredRequestLog(t *testing.T) {
	clock := fakeclock.New(time.Date(2031, 1, 10, 0, 0, 0, 0, time.UTC))
	logs := &logStore{}
	w := newLedgerWriter(WriterConfig{Store: newBatchStore(), MaxDelay: 0, RequestLog: logs,
		RequestLogRetention: 48 * time.Hour, Now: clock.Now}, never)
	defer w.Close()
	logs.entries = []storage.RequestLogEntry{
		{RequestID: "old", At: clock.Now().Add(-72 * time.Hour)},
		{RequestID: "new", At: clock.Now().Add(-24 * time.Hour)},
	}
	n, err := w.SweepRequestLog(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("SweepRequestLog = %d, %v; want 1 deleted", n, err)
	}
	logs.mu.Lock()
	left := logs.entries
	logs.mu.Unlock()
	if len(left) != 1 || left[0].RequestID != "new" {
		t.Errorf("left %+v; want the entry of yesterday", left)
	}
	w.SetRequestLogRetention(0)
	clock.Advance(1000 * time.Hour)
	if n, err := w.SweepRequestLog(t.Context()); n != 0 || err != nil {
		t.Errorf("SweepRequestLog without retention = %d, %v; want nothing deleted", n, err)
	}
}

func TestWriterRequestLogDoesNotFillABatch(t *testing.T) {
	charges := newBatchStore()
	charges.gate = make(chan struct{})
	charges.entered = make(chan int, 10)
	logs := &logStore{}
	// The delay never passes: only a full batch of charges, or Close,
	// commits.
	w := newLedgerWriter(WriterConfig{Store: charges, MaxDelay: time.Hour, MaxBatch: 2, RequestLog: logs}, never)
	c := newCompletions()
	c.enqueue(w, "r0", 1)
	c.enqueue(w, "r0b", 1)
	<-charges.entered // the writer is in a commit while r1 and entries queue
	c.enqueue(w, "r1", 1)
	for range 5 {
		w.Log(storage.RequestLogEntry{RequestID: "x"})
	}
	charges.gate <- struct{}{}
	stop := openGate(charges.gate)
	defer stop()
	// One charge and five entries are no full batch: nothing commits
	// until a second charge comes.
	select {
	case n := <-charges.entered:
		t.Fatalf("a batch of %d charges committed with the entries counted towards it", n)
	case <-time.After(100 * time.Millisecond):
	}
	c.enqueue(w, "r2", 1)
	if n := <-charges.entered; n != 2 {
		t.Errorf("second batch of %d; want r1 and r2", n)
	}
	_ = w.Close()
	if appends, _ := logs.snapshot(); len(appends) == 0 {
		t.Error("the entries were not appended")
	}
}
