package billing

import (
	"slices"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
)

func TestWriterTellsCommitHooksOfChargedAccounts(t *testing.T) {
	store := newBatchStore()
	store.badRequest = "bad"
	store.gate, store.entered = make(chan struct{}), make(chan int, 100)
	w := newLedgerWriter(WriterConfig{Store: store, MaxDelay: 0}, never)
	defer w.Close()
	var mu sync.Mutex
	var told [][]string
	remove := w.OnCommit(func(accounts []string) {
		mu.Lock()
		told = append(told, slices.Clone(accounts))
		mu.Unlock()
	})
	panicky := w.OnCommit(func([]string) { panic("a hook's bug") })
	c := newCompletions()
	c.enqueue(w, "first", 1)
	<-store.entered
	var wg sync.WaitGroup
	for i, acct := range []string{"acct_2", "acct_3", "acct_2", "acct_4"} {
		wg.Add(1)
		id := []string{"r-1", "r-2", "r-3", "bad"}[i]
		w.Enqueue(storage.UsageRecord{AccountID: acct, RequestID: id, CostCents: 1}, func(storage.UsageRecord, error) { wg.Done() })
	}
	store.gate <- struct{}{}
	<-store.entered
	store.gate <- struct{}{}
	c.all.Wait()
	wg.Wait()
	mu.Lock()
	got := slices.Clone(told)
	mu.Unlock()
	// The second batch's bad record (acct_4) was not charged.
	want := [][]string{{"acct_1"}, {"acct_2", "acct_3"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("hooks told %v, want %v", got, want)
	}
	remove()
	panicky()
	c.enqueue(w, "after", 1)
	<-store.entered
	store.gate <- struct{}{}
	c.all.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 2 {
		t.Errorf("a removed hook was told %v", told[2:])
	}
}
