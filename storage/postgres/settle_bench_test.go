package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/storagetest"
)

// BenchmarkSettleUsageBatch is the ledger writer's transaction on
// PostgreSQL: batches of usage records, each a charge and a usage row,
// spread over a few accounts, with ids that grow with time as the
// gateway's charge ids do. ns/op is per record, so 1e9/(ns/op) is the
// records one writer settles a second, one transaction at a time.
// cpu-ns/op is this process's CPU per record (the driver's side);
// pg-cpu-ns/op the CPU of the PostgreSQL backends serving the benchmark's
// database (read from /proc, so only with the server on this machine;
// the WAL writer's and checkpointer's work is not in it); wal-B/op the
// WAL it wrote per record. On a shared machine the wall time is what
// the others leave; the CPU and WAL per record are what the scale model
// in docs/performance.md rests on.
func BenchmarkSettleUsageBatch(b *testing.B) {
	for _, size := range []int{1, 16, 32, 64, 128, 256} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			ctx := b.Context()
			dsn := testenv.Postgres(b)
			s, err := postgres.Open(ctx, dsn, storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			admin, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer admin.Close(context.WithoutCancel(ctx))
			server := func() (cpu time.Duration, wal int64) {
				var pids []int
				rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
				if err != nil {
					b.Fatal(err)
				}
				for rows.Next() {
					var pid int
					if err := rows.Scan(&pid); err != nil {
						b.Fatal(err)
					}
					pids = append(pids, pid)
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				for _, pid := range pids {
					cpu += procCPU(pid)
				}
				if err := admin.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'`).Scan(&wal); err != nil {
					b.Fatal(err)
				}
				return cpu, wal
			}
			accounts := storagetest.BenchAccounts(b, s, 4)
			batch := make([]storage.UsageRecord, size)
			seq := 0
			// The store's connections, opened by a first batch, are the
			// ones whose CPU is read.
			if _, err := s.SettleUsageBatch(ctx, []storage.UsageRecord{{AccountID: accounts[0], KeyID: "key_bench",
				RequestID: "warm-" + rand.Text(), Model: "gpt-4o-mini", Outcome: storage.OutcomeCompleted,
				CostCents: 1, Started: time.Now(), Finished: time.Now()}}); err != nil {
				b.Fatal(err)
			}
			serverCPU, wal := server()
			b.ReportAllocs()
			cpu := storagetest.ProcessCPU()
			for b.Loop() {
				if seq%size == 0 {
					b.StopTimer()
					now := time.Now()
					for i := range batch {
						batch[i] = storage.UsageRecord{
							AccountID: accounts[(seq+i)%len(accounts)], KeyID: "key_bench",
							RequestID: fmt.Sprintf("%016x-%s", now.UnixNano()+int64(i), rand.Text()[:10]),
							Model:     "gpt-4o-mini", PromptTokens: 1200, CompletionTokens: 300,
							Outcome: storage.OutcomeCompleted, CostCents: 1, Started: now, Finished: now,
						}
					}
					b.StartTimer()
					settled, err := s.SettleUsageBatch(ctx, batch)
					if err != nil {
						b.Fatal(err)
					}
					for _, x := range settled {
						if x.Err != nil {
							b.Fatal(x.Err)
						}
					}
				}
				seq++
			}
			b.ReportMetric(float64(storagetest.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
			serverCPUAfter, walAfter := server()
			b.ReportMetric(float64(serverCPUAfter-serverCPU)/float64(b.N), "pg-cpu-ns/op")
			b.ReportMetric(float64(walAfter-wal)/float64(b.N), "wal-B/op")
		})
	}
}

// procCPU is the user and system time of process pid, at the resolution
// of a clock tick (10 ms); 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(string(f[11]), 10, 64)
	stime, _ := strconv.ParseInt(string(f[12]), 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkSettleUsageBatchLogged is the ledger writer's batch with the
// request log on PostgreSQL (storagetest.BenchSettleUsageBatchLogged).
func BenchmarkSettleUsageBatchLogged(b *testing.B) {
	storagetest.BenchSettleUsageBatchLogged(b, func(b *testing.B) storagetest.LoggedStore {
		s, err := postgres.Open(b.Context(), testenv.Postgres(b), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}, func() uint64 { _, n, _ := postgres.Counts(); return n })
}
