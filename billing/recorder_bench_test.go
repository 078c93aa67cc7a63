package billing

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// BenchmarkRecorder charges requests on an embedded SQLite store, 32 at a
// time as a loaded node would: "single" commits each charge in its own
// transaction (Recorder.RecordUsage), "group" through a LedgerWriter
// (Recorder.Settle) that commits what is queued at once (MaxDelay 0),
// each request waiting until its charge is committed, as its hold does.
// ns/op is the inverse of the charges per second. (With the default
// 2ms delay this closed loop of 32 would wait out the delay on every
// batch; a gateway's clients do not wait for the commit.)
func BenchmarkRecorder(b *testing.B) {
	const concurrency = 32
	setup := func(b *testing.B) (*Recorder, string, storage.Store) {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		acct, err := st.EnsureAccount(b.Context(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		return &Recorder{Store: st, Profile: policy.ProfileFor(policy.RevisionB)}, acct.ID, st
	}
	var seq atomic.Int64
	record := func(account string) storage.UsageRecord {
		now := time.Now()
		return storage.UsageRecord{
			AccountID: account, KeyID: "key_bench", RequestID: fmt.Sprint("bench-", seq.Add(1)), Model: "m",
			PromptTokens: 1200, CompletionTokens: 300, Outcome: storage.OutcomeCompleted, Started: now, Finished: now,
		}
	}
	parallel := func(b *testing.B, fn func()) {
		b.SetParallelism(max(concurrency/runtime.GOMAXPROCS(0), 1))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				fn()
			}
		})
	}

	b.Run("single", func(b *testing.B) {
		r, account, _ := setup(b)
		parallel(b, func() {
			if _, err := r.RecordUsage(b.Context(), record(account)); err != nil {
				b.Error(err)
			}
		})
	})
	b.Run("group", func(b *testing.B) {
		r, account, st := setup(b)
		r.Writer = NewLedgerWriter(WriterConfig{Store: st})
		defer r.Writer.Close()
		parallel(b, func() {
			done := make(chan error, 1)
			r.Settle(record(account), func(_ int64, err error) { done <- err })
			if err := <-done; err != nil {
				b.Error(err)
			}
		})
	})
}
