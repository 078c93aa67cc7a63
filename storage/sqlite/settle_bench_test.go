package sqlite_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

// BenchmarkSettleUsageBatch is the ledger writer's transaction on the
// embedded store: batches of usage records, each a charge and a usage
// row, spread over a few accounts. ns/op is per record.
//
// ids=random keys the records by random ids, as Caddy's request UUIDs
// were; ids=time by ids that grow with time, as the gateway's charge ids
// (policy.NewChargeID) do. The gap widens with the tables: run with
// -benchtime 60000x to see it.
func BenchmarkSettleUsageBatch(b *testing.B) {
	for _, ids := range []string{"random", "time"} {
		for _, size := range []int{1, 8, 32, 128} {
			b.Run(fmt.Sprintf("ids=%s/batch=%d", ids, size), func(b *testing.B) {
				ctx := b.Context()
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "switchyard.db"), storage.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				accounts := storagetest.BenchAccounts(b, s, 4)
				batch := make([]storage.UsageRecord, size)
				seq := 0
				b.ReportAllocs()
				cpu := storagetest.ProcessCPU()
				for b.Loop() {
					if seq%size == 0 {
						b.StopTimer()
						now := time.Now()
						for i := range batch {
							id := rand.Text()
							if ids == "time" {
								id = fmt.Sprintf("%016x-%s", now.UnixNano()+int64(i), id[:10])
							}
							batch[i] = storage.UsageRecord{
								AccountID: accounts[(seq+i)%len(accounts)], KeyID: "key_bench",
								RequestID: id,
								Model:     "gpt-4o-mini", PromptTokens: 1200, CompletionTokens: 300,
								Outcome: storage.OutcomeCompleted, CostCents: 1, Started: now, Finished: now,
							}
						}
						b.StartTimer()
						if _, err := s.SettleUsageBatch(ctx, batch); err != nil {
							b.Fatal(err)
						}
					}
					seq++
				}
				b.ReportMetric(float64(storagetest.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkSettleUsageBatchLogged is the ledger writer's batch with the
// request log on the embedded store (storagetest.BenchSettleUsageBatchLogged).
func BenchmarkSettleUsageBatchLogged(b *testing.B) {
	storagetest.BenchSettleUsageBatchLogged(b, func(b *testing.B) storagetest.LoggedStore {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "switchyard.db"), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}, func() uint64 { _, n, _ := sqlite.Counts(); return n })
}
