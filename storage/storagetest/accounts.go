package storagetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testAccounts(t *testing.T) {
	t.Run("EnsureCreatesOnce", func(t *testing.T) {
		s, c := h.clockedStore(t)
		ctx := t.Context()

		a, err := s.EnsureAccount(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a.ID, "acct_") || a.Name != "alice" || !a.CreatedAt.Equal(c.Now()) {
			t.Errorf("EnsureAccount = %+v, want an acct_ id, name alice, created at %v", a, c.Now())
		}
		c.Advance(time.Hour)
		again, err := s.EnsureAccount(ctx, "alice")
		if err != nil || again != a {
			t.Errorf("second EnsureAccount = %+v, %v; want %+v", again, err, a)
		}
		byName, err := s.AccountByName(ctx, "alice")
		if err != nil || byName != a {
			t.Errorf("AccountByName = %+v, %v; want %+v", byName, err, a)
		}
		bob := mustAccount(t, s, "bob")
		if bob.ID == a.ID {
			t.Errorf("alice and bob share id %s", a.ID)
		}
		if n, err := s.CountAccounts(ctx); err != nil || n != 2 {
			t.Errorf("CountAccounts = %d, %v; want 2", n, err)
		}
	})

	t.Run("EnsureEmptyName", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		if _, err := s.EnsureAccount(t.Context(), ""); err == nil {
			t.Error("EnsureAccount(\"\") succeeded")
		}
	})

	t.Run("EnsureConcurrently", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		ids := make([]string, 16)
		errs := make([]error, len(ids))
		parallel(len(ids), func(i int) {
			a, err := procs.pick(i).EnsureAccount(t.Context(), "carol")
			ids[i], errs[i] = a.ID, err
		})
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Errorf("call %d: id %q, error %v; want id %q", i, ids[i], errs[i], ids[0])
			}
		}
		if n, err := procs[0].CountAccounts(t.Context()); err != nil || n != 1 {
			t.Errorf("CountAccounts = %d, %v; want 1", n, err)
		}
	})

	t.Run("ByNameUnknown", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		if _, err := s.AccountByName(t.Context(), "nobody"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("AccountByName(nobody) error = %v, want ErrNotFound", err)
		}
		if n, err := s.CountAccounts(t.Context()); err != nil || n != 0 {
			t.Errorf("CountAccounts = %d, %v; want 0", n, err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s, c := h.clockedStore(t)
		ctx := t.Context()
		a := mustAccount(t, s, "dave")
		other := mustAccount(t, s, "erin")
		_, hash1 := mustKey(t, s, a.ID)
		_, hash2 := mustKey(t, s, a.ID)
		_, otherHash := mustKey(t, s, other.ID)
		mustPost(t, s, a.ID, 700, "t1")

		deletedAt := c.Advance(time.Minute)
		if err := s.DeleteAccount(ctx, a.ID); err != nil {
			t.Fatalf("DeleteAccount: %v", err)
		}
		if _, err := s.AccountByName(ctx, "dave"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("AccountByName after delete: %v, want ErrNotFound", err)
		}
		if n, err := s.CountAccounts(ctx); err != nil || n != 1 {
			t.Errorf("CountAccounts = %d, %v; want 1", n, err)
		}
		for _, hash := range []string{hash1, hash2} {
			if o, err := s.LookupKey(ctx, hash); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("LookupKey of a deleted account's key = %+v, %v; want ErrNotFound", o, err)
			}
		}
		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 2 {
			t.Fatalf("ListKeys = %d keys, %v; want 2", len(keys), err)
		}
		for _, k := range keys {
			if k.Active() || !k.RevokedAt.Equal(deletedAt) {
				t.Errorf("key %s revoked at %v, want %v", k.ID, k.RevokedAt, deletedAt)
			}
		}
		if _, err := s.LookupKey(ctx, otherHash); err != nil {
			t.Errorf("another account's key stopped working: %v", err)
		}
		if _, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: newHash()}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("CreateKey on a deleted account: %v, want ErrNotFound", err)
		}
		if err := s.DeleteAccount(ctx, a.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("second DeleteAccount: %v, want ErrNotFound", err)
		}
		if err := s.DeleteAccount(ctx, "acct_unknown"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("DeleteAccount(unknown): %v, want ErrNotFound", err)
		}

		// The ledger is kept, and charges still in flight settle.
		if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: -50, Kind: storage.EntryCharge, Reference: "late"}); err != nil {
			t.Errorf("Post to a deleted account: %v", err)
		}
		wantBalance(t, s, a.ID, 650)
		if es, err := s.Entries(ctx, a.ID, 0); err != nil || len(es) != 2 {
			t.Errorf("Entries of the deleted account = %d, %v; want 2", len(es), err)
		}

		// The name is free again, for a new account.
		fresh := mustAccount(t, s, "dave")
		if fresh.ID == a.ID {
			t.Errorf("EnsureAccount after delete returned the deleted account %s", a.ID)
		}
		wantBalance(t, s, fresh.ID, 0)
	})
}
