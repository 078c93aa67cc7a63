package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// A write transaction signals the commit feed in its COMMIT's round
// trip: a commit is signalled once, to other processes and to its own;
// a rollback, and a commit that fails because the transaction did, are
// not, and the failed commit is an error.
func TestCommitSignalsWhatCommitsOnly(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	d := &driver{pool: pool, feed: newCommitFeed(pool.Config().ConnConfig)}
	listener, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN "+commitsChannel); err != nil {
		t.Fatal(err)
	}
	signals := func() int {
		n := 0
		for {
			waitCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err := listener.WaitForNotification(waitCtx)
			cancel()
			if err != nil {
				return n
			}
			n++
		}
	}
	run := func(sql string, commit bool) error {
		tx, err := d.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, sql); err != nil && commit {
			return tx.Commit(ctx) // the failed transaction's
		}
		if !commit {
			return tx.Rollback(ctx)
		}
		return tx.Commit(ctx)
	}

	if err := run("CREATE TABLE signalled (n INT)", true); err != nil {
		t.Fatal(err)
	}
	if n, counted := signals(), d.feed.count.Load(); n != 1 || counted != 1 {
		t.Fatalf("a commit: %d notifications, %d counted; want 1 and 1", n, counted)
	}
	if err := run("INSERT INTO signalled VALUES (1)", false); err != nil {
		t.Fatal(err)
	}
	if err := run("INSERT INTO signalled VALUES (1/0)", true); err == nil {
		t.Fatal("the commit of a failed transaction returned no error")
	}
	if n, counted := signals(), d.feed.count.Load(); n != 0 || counted != 1 {
		t.Fatalf("a rollback and a failed commit: %d notifications, %d counted; want 0 and 1", n, counted)
	}
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM signalled").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d rows (%v), want none", rows, err)
	}
}
