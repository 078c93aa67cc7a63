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
	pool, dsn := testPool(t)
	d := newTestDriver(pool)
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

// A commit of this process moves its own revision once: as it returns,
// not again as its notification arrives, or every cached key's next
// request reads its state from the database twice a commit. A commit of
// another process still counts as its notification arrives.
func TestOwnCommitCountsOnce(t *testing.T) {
	ctx := context.Background()
	pool, _ := testPool(t)
	d := newTestDriver(pool)
	defer d.feed.stop()
	other := newTestDriver(pool)
	live := func() bool { _, ok := d.feed.revision(); return ok }
	for deadline := time.Now().Add(5 * time.Second); !live(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the feed is not live after 5s")
		}
	}
	commit := func(d *driver) {
		tx, err := d.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Pings go by, so that every notification sent before has arrived.
	settled := func() uint64 {
		time.Sleep(3 * feedPingEvery)
		if !live() {
			t.Fatal("the feed went down")
		}
		return d.feed.count.Load()
	}
	before := settled()
	for range 5 {
		commit(d)
	}
	if n := settled() - before; n != 5 {
		t.Fatalf("5 commits of this process counted %d times, want 5", n)
	}
	before = settled()
	commit(other)
	if n := settled() - before; n != 1 {
		t.Fatalf("a commit of another process counted %d times, want 1", n)
	}
	if n := len(d.feed.halfCounted); n != 0 {
		t.Errorf("%d commits left half-counted", n)
	}
}

// Whichever of a commit's return and its notification comes first
// counts it; a failed commit's notification, if one came, is not
// waited for.
func TestCountOnceInEitherOrder(t *testing.T) {
	f := newCommitFeed(nil)
	f.countOnce(1) // returned
	f.countOnce(2) // notified
	f.countOnce(2) // returned
	f.countOnce(1) // notified
	if n := f.count.Load(); n != 2 {
		t.Fatalf("two commits counted %d times", n)
	}
	f.countOnce(3) // notified, but its COMMIT reported an error
	f.forgetOwn(3)
	if n := f.count.Load(); n != 3 || len(f.halfCounted) != 0 {
		t.Fatalf("count %d, %d left half-counted; want 3 and none", n, len(f.halfCounted))
	}
	for seq := range uint64(2 * halfCountedMax) {
		f.countOnce(100 + seq)
	}
	if n := len(f.halfCounted); n > halfCountedMax {
		t.Fatalf("%d half-counted, want at most %d", n, halfCountedMax)
	}
	if seq, ok := f.ownSeq(f.token + ":42"); !ok || seq != 42 {
		t.Errorf("ownSeq of its own payload: %d %v", seq, ok)
	}
	for _, p := range []string{"", "0123456789abcdef:1", f.token, f.token + ":", f.token + "x:1", f.token + ":-1"} {
		if _, ok := f.ownSeq(p); ok {
			t.Errorf("ownSeq(%q) took it for its own", p)
		}
	}
}

// testPool is a pool on the test database, closed after the test, and
// the database's URL.
func testPool(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	dsn := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, dsn
}

// newTestDriver is a driver on pool with a commit feed of its own, as a
// process of its own has.
func newTestDriver(pool *pgxpool.Pool) *driver {
	return &driver{pool: pool, feed: newCommitFeed(pool.Config().ConnConfig)}
}
