package sqlite_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// topUpFromChild, set in a child's environment, names the database the
// child tops up before it exits: a commit by another process, as the CLI
// makes.
const topUpFromChild = "SWITCHYARD_TEST_TOPUP_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(topUpFromChild); path != "" {
		os.Exit(topUp(path))
	}
	os.Exit(m.Run())
}

func topUp(path string) int {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, storage.Options{})
	if err != nil {
		return 2
	}
	defer s.Close()
	a, err := s.EnsureAccount(ctx, "alice")
	if err != nil {
		return 3
	}
	if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 500, Kind: storage.EntryTopUp, Reference: "child"}); err != nil {
		return 4
	}
	return 0
}

// TestRevisionMovesOnEveryCommit checks what the key cache relies on:
// reads leave the revision alone, and every commit moves it, whether
// this store, another connection or another process made it.
func TestRevisionMovesOnEveryCommit(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "switchyard.db")
	s, a := openWithAccount(t, path, "alice")
	rev := func() storage.Revision {
		t.Helper()
		r, ok := s.Revision()
		if !ok {
			t.Fatal("Revision: the store cannot tell")
		}
		return r
	}
	seen := map[storage.Revision]string{}
	moved := func(what string) {
		t.Helper()
		r := rev()
		if earlier, ok := seen[r]; ok {
			t.Fatalf("after %s the revision is the one seen after %s", what, earlier)
		}
		seen[r] = what
	}
	moved("opening")

	before := rev()
	if _, _, err := s.KeyState(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Balance(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := rev(); got != before {
		t.Fatal("reads moved the revision")
	}

	for i, ref := range []string{"one", "two", "three"} {
		if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: int64(100 + i), Kind: storage.EntryTopUp, Reference: ref}); err != nil {
			t.Fatal(err)
		}
		moved("top-up " + ref)
	}

	other, err := sqlite.Open(ctx, path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.EnsureAccount(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	moved("a commit by another store")

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), topUpFromChild+"="+path)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	moved("a commit by another process")
	if bal, err := s.Balance(ctx, a.ID); err != nil || bal != 100+101+102+500 {
		t.Fatalf("balance %d, %v; want the child's top-up seen too", bal, err)
	}
}
