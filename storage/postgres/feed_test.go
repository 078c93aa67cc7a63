package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
)

// eventually polls cond until it holds, or fails after a few seconds: it
// waits for the feed's connection and notifications, which arrive on
// their own time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
	}
}

// TestRevisionFollowsCommits checks what the key cache relies on in the
// distributed mode: reads and time leave the revision alone; a commit of
// this store moves it at once, one of another node as its notification
// arrives; and a feed whose connection broke reports nothing until it
// is back, then starts a new count.
func TestRevisionFollowsCommits(t *testing.T) {
	dsn := databaseDSN(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := postgres.Open(ctx, dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	var rev storage.Revision
	live := func() bool {
		r, ok := s.Revision()
		rev = r
		return ok
	}
	eventually(t, "the feed going live", live)

	a, err := s.EnsureAccount(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	// EnsureAccount may be a plain INSERT, outside a transaction: take the
	// revision after anything it caused has arrived.
	time.Sleep(100 * time.Millisecond)
	if !live() {
		t.Fatal("feed not live")
	}
	before := rev
	if _, _, err := s.KeyState(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// Several pings go by: they prove freshness and move nothing.
	time.Sleep(200 * time.Millisecond)
	if !live() || rev != before {
		t.Fatalf("a read and pings moved the revision (live %v)", live())
	}

	if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 100, Kind: storage.EntryTopUp, Reference: "own"}); err != nil {
		t.Fatal(err)
	}
	if !live() || rev == before {
		t.Fatal("this store's own commit did not move the revision at once")
	}

	before = rev
	if _, err := other.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 100, Kind: storage.EntryTopUp, Reference: "other"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "another node's commit reaching the feed", func() bool { return live() && rev != before })

	// Kill the feed's connection, as a failover would.
	before = rev
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var killed int
	err = admin.QueryRow(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`,
		postgres.DefaultApplicationName+"-commits").Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d feed connections (%v), want 1", killed, err)
	}
	eventually(t, "the broken feed reporting nothing", func() bool { return !live() })
	eventually(t, "the feed back", live)
	if rev == before {
		t.Fatal("the reconnected feed reused the revision of the broken one")
	}
}
