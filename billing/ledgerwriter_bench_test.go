package billing

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// nopStore settles every record and keeps every entry without storing
// anything, as a database that costs nothing would: what the writer's
// benchmarks measure is the writer's own work. A batch takes commit,
// asleep, as a database's round trips would.
type nopStore struct{ commit time.Duration }

func (nopStore) SettleUsage(_ context.Context, u storage.UsageRecord) (storage.UsageRecord, error) {
	return u, nil
}

func (s nopStore) SettleUsageBatch(_ context.Context, recs []storage.UsageRecord) ([]storage.Settlement, error) {
	if s.commit > 0 {
		time.Sleep(s.commit)
	}
	// A store answers with a new slice, as sqlstore does.
	out := make([]storage.Settlement, len(recs))
	for i, u := range recs {
		out[i].Record = u
	}
	return out, nil
}

func (s nopStore) SettleUsageBatchLogged(ctx context.Context, recs []storage.UsageRecord,
	_ []storage.RequestLogEntry) ([]storage.Settlement, error, error) {
	out, err := s.SettleUsageBatch(ctx, recs)
	return out, nil, err
}

func (nopStore) UsageRecords(context.Context, string, int) ([]storage.UsageRecord, error) {
	return nil, nil
}

func (nopStore) AppendRequestLog(context.Context, []storage.RequestLogEntry) error { return nil }

func (nopStore) RequestLogPage(context.Context, string, storage.RequestLogQuery) ([]storage.RequestLogEntry, error) {
	return nil, nil
}

func (nopStore) PruneRequestLog(context.Context, time.Time, int) (int64, error) { return 0, nil }

// BenchmarkLedgerWriter is what a request costs the writer on the Go
// side, 32 requests at a time as a loaded node runs them, on a store
// that does nothing: "log" hands the writer a request log entry,
// "charge" a charge and waits for its completion, "both" does the two,
// as a charged request does. The writer commits at once what is queued
// (MaxDelay 0): on a store that answers at once, batches of a record or
// two; "both/commit=200us" has a batch take 200µs, which gathers the 32
// requests in one, as the delay does on a loaded node. allocs/op counts
// the writer's goroutines' allocations as well as the callers'.
func BenchmarkLedgerWriter(b *testing.B) {
	const concurrency = 32
	now := time.Now()
	rec := storage.UsageRecord{
		AccountID: "acct_bench", KeyID: "key_bench", RequestID: "req_bench", Model: "gpt-4o-mini",
		PromptTokens: 1200, CompletionTokens: 300, Outcome: storage.OutcomeCompleted, CostCents: 1,
		Started: now, Finished: now,
	}
	entry := storage.RequestLogEntry{
		AccountID: "acct_bench", KeyID: "key_bench", At: now, RequestID: "req_bench", ChargeID: "req_bench",
		Route: "v1", Method: "POST", Path: "/v1/chat/completions", ModelAsked: "gpt-4o-mini",
		ModelServed: "gpt-4o-mini", Status: 200, PromptTokens: 1200, CompletionTokens: 300, CostCents: 1,
		Latency: 30 * time.Millisecond, FirstByte: 20 * time.Millisecond,
	}
	for _, mode := range []string{"log", "charge", "both", "both/commit=200us"} {
		b.Run(mode, func(b *testing.B) {
			store := nopStore{}
			if mode == "both/commit=200us" {
				store.commit = 200 * time.Microsecond
			}
			w := NewLedgerWriter(WriterConfig{Store: store, RequestLog: store, MaxDelay: 0})
			defer w.Close()
			b.SetParallelism(max(concurrency/runtime.GOMAXPROCS(0), 1))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				// One channel and completion per client, as a request's
				// hold is one per request, made before the loop: what
				// is measured is the writer's share.
				settled := make(chan error, 1)
				complete := func(_ storage.UsageRecord, err error) { settled <- err }
				for pb.Next() {
					if mode != "log" { // a charge
						w.Enqueue(rec, complete)
						if err := <-settled; err != nil {
							b.Error(err)
						}
					}
					if mode != "charge" { // an entry
						w.Log(entry)
					}
				}
			})
		})
	}
}
