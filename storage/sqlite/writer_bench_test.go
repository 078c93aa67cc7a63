package sqlite_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

// BenchmarkWriterBatch is the ledger writer's transaction as the
// gateway's /v1 bench gives it to the embedded store: every charge with
// its request log entry, in one transaction (SettleUsageBatchLogged),
// the usage record keyed by a time-ordered charge id, the entry by
// Caddy's random request id, one account and one key (accounts=1, as
// the bench's) or four, each the demo backend's answer (one model, the
// same tokens) at times of its own. batch is how many charges a commit
// holds: about 70 at concurrency 1 and up to MaxBatch (256) at 32 with
// the writer's default delay. ns/op and cpu-ns/op are per charge.
func BenchmarkWriterBatch(b *testing.B) {
	for _, accounts := range []int{1, 4} {
		for _, size := range []int{64, 128, 256, 512} {
			b.Run(fmt.Sprintf("accounts=%d/batch=%d", accounts, size), func(b *testing.B) {
				benchWriterBatch(b, accounts, size)
			})
		}
	}
}

func benchWriterBatch(b *testing.B, nAccounts, size int) {
	ctx := b.Context()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "switchyard.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	accounts := storagetest.BenchAccounts(b, s, nAccounts)
	batch := make([]storage.UsageRecord, size)
	entries := make([]storage.RequestLogEntry, size)
	seq := 0
	b.ReportAllocs()
	cpu := storagetest.ProcessCPU()
	for b.Loop() {
		if seq%size == 0 {
			b.StopTimer()
			now := time.Now()
			for i := range batch {
				chargeID := fmt.Sprintf("%012x-7%03x-%s", now.UnixMilli(), (seq+i)&0xfff, rand.Text()[:18])
				var rid [16]byte
				rand.Read(rid[:])
				requestID := hex.EncodeToString(rid[:])
				account := accounts[(seq+i)%len(accounts)]
				// Each request has times of its own, a few µs apart.
				started := now.Add(time.Duration(i*37) * time.Microsecond)
				took := time.Duration(250+i%50) * time.Microsecond
				batch[i] = storage.UsageRecord{
					AccountID: account, KeyID: "key_3kqZbWq1x9QdE2mP0aLr7t", RequestID: chargeID,
					Model: "switchyard-demo", Upstream: "http://127.0.0.1:9000",
					PromptTokens: 12, CompletionTokens: 9,
					Outcome: storage.OutcomeCompleted, CostCents: 1, Started: started, Finished: started.Add(took),
				}
				entries[i] = storage.RequestLogEntry{
					AccountID: account, KeyID: batch[i].KeyID, At: started, RequestID: requestID, ChargeID: chargeID,
					Route: "v1", Method: "POST", Path: "/v1/chat/completions", ModelAsked: "switchyard-demo",
					ModelServed: "switchyard-demo", Upstream: batch[i].Upstream, Status: 200,
					PromptTokens: 12, CompletionTokens: 9, CostCents: 1,
					Latency: took + 20*time.Microsecond, FirstByte: took,
				}
			}
			b.StartTimer()
			if _, logErr, err := s.SettleUsageBatchLogged(ctx, batch, entries); err != nil || logErr != nil {
				b.Fatal(err, logErr)
			}
		}
		seq++
	}
	b.ReportMetric(float64(storagetest.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
