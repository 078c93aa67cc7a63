package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// BenchmarkCommitFeed is what the commit feed of a node does for each
// commit of another: notifications on commitsChannel, sent 256 to a
// transaction, each counted as it arrives. allocs/op include the
// sender's share, the same in every run.
func BenchmarkCommitFeed(b *testing.B) {
	ctx := b.Context()
	dsn := testenv.Postgres(b)
	config, err := pgx.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	f := newCommitFeed(config)
	defer f.stop()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := f.revision(); ok {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the feed did not go live")
		}
	}
	sender, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer sender.Close(ctx)
	const perCommit = 256
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		if n%perCommit != 0 {
			continue
		}
		want := f.count.Load() + perCommit
		// Notifications of one transaction with the same payload are
		// delivered once: each has its own.
		if _, err := sender.Exec(ctx, "SELECT pg_notify('"+commitsChannel+"', g::text) FROM generate_series(1, $1) g", perCommit); err != nil {
			b.Fatal(err)
		}
		for f.count.Load() < want {
			time.Sleep(50 * time.Microsecond)
		}
	}
}
