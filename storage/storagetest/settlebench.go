package storagetest

import (
	"crypto/rand"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// LoggedStore is a store that settles a batch with its request log
// entries.
type LoggedStore interface {
	storage.Store
	storage.LoggedSettler
}

// BenchSettleUsageBatchLogged is the ledger writer's batch with the
// request log on the store open opens: each record with its entry,
// written apart (the charges' transaction, then the entries' own, as
// before SettleUsageBatchLogged) or together in one transaction. ns/op
// is per record; tx/batch the write transactions (transactions counts
// them) a batch took; cpu-ns/op the process's CPU time per record.
func BenchSettleUsageBatchLogged(b *testing.B, open func(b *testing.B) LoggedStore, transactions func() uint64) {
	for _, mode := range []string{"apart", "together"} {
		for _, size := range []int{32, 128} {
			b.Run(fmt.Sprintf("log=%s/batch=%d", mode, size), func(b *testing.B) {
				ctx := b.Context()
				s := open(b)
				defer s.Close()
				accounts := BenchAccounts(b, s, 4)
				batch := make([]storage.UsageRecord, size)
				entries := make([]storage.RequestLogEntry, size)
				seq, batches := 0, 0
				b.ReportAllocs()
				cpu := ProcessCPU()
				txBefore := transactions()
				for b.Loop() {
					if seq%size == 0 {
						b.StopTimer()
						now := time.Now()
						for i := range batch {
							id := fmt.Sprintf("%016x-%s", now.UnixNano()+int64(i), rand.Text()[:10])
							batch[i] = storage.UsageRecord{
								AccountID: accounts[(seq+i)%len(accounts)], KeyID: "key_bench", RequestID: id,
								Model: "gpt-4o-mini", PromptTokens: 1200, CompletionTokens: 300,
								Outcome: storage.OutcomeCompleted, CostCents: 1, Started: now, Finished: now,
							}
							entries[i] = storage.RequestLogEntry{
								AccountID: batch[i].AccountID, KeyID: "key_bench", At: now, RequestID: id, ChargeID: id,
								Route: "v1", Method: "POST", Path: "/v1/chat/completions", ModelAsked: "gpt-4o-mini",
								ModelServed: "gpt-4o-mini", Status: 200, PromptTokens: 1200, CompletionTokens: 300,
								CostCents: 1, Latency: 30 * time.Millisecond, FirstByte: 20 * time.Millisecond,
							}
						}
						b.StartTimer()
						if mode == "apart" {
							if _, err := s.SettleUsageBatch(ctx, batch); err != nil {
								b.Fatal(err)
							}
							if err := s.AppendRequestLog(ctx, entries); err != nil {
								b.Fatal(err)
							}
						} else {
							_, logErr, err := s.SettleUsageBatchLogged(ctx, batch, entries)
							if err != nil || logErr != nil {
								b.Fatal(err, logErr)
							}
						}
						batches++
					}
					seq++
				}
				b.ReportMetric(float64(ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
				txAfter := transactions()
				b.ReportMetric(float64(txAfter-txBefore)/float64(batches), "tx/batch")
			})
		}
	}
}

// BenchAccounts makes n accounts in s for a benchmark's charges to be
// spread over, and returns their ids.
func BenchAccounts(b *testing.B, s storage.Store, n int) []string {
	b.Helper()
	ids := make([]string, n)
	for i := range ids {
		a, err := s.EnsureAccount(b.Context(), fmt.Sprint("bench-", i))
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
	}
	return ids
}

// ProcessCPU is the CPU time this process has used, user and system:
// on a shared machine a steadier measure than the wall clock.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
