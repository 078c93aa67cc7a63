package storagetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testKeys(t *testing.T) {
	t.Run("CreateAndLookup", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		hash := newHash()

		k, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: hash, Hint: "sk-...a1B2", Label: "laptop"})
		if err != nil {
			t.Fatal(err)
		}
		want := storage.APIKey{ID: k.ID, AccountID: a.ID, Hint: "sk-...a1B2", Label: "laptop", CreatedAt: c.Now()}
		if !strings.HasPrefix(k.ID, "key_") || !keysEqual(k, want) || !k.Active() {
			t.Errorf("CreateKey = %+v, want %+v with a key_ id", k, want)
		}
		o, err := s.LookupKey(ctx, hash)
		wantOwner := storage.KeyOwner{KeyID: k.ID, KeyHash: hash, KeyHint: "sk-...a1B2", AccountID: a.ID, AccountName: "alice"}
		if err != nil || !reflect.DeepEqual(o, wantOwner) {
			t.Errorf("LookupKey = %+v, %v; want %+v", o, err, wantOwner)
		}
		if _, err := s.LookupKey(ctx, newHash()); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("LookupKey(unknown) error = %v, want ErrNotFound", err)
		}
		// The lookup carries the balance as it is now, for the balance gate.
		mustPost(t, s, a.ID, 1234, "r1")
		if o, err := s.LookupKey(ctx, hash); err != nil || o.BalanceCents != 1234 {
			t.Errorf("LookupKey after a credit = %+v, %v; want balance 1234", o, err)
		}
		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 1 || !keysEqual(keys[0], want) {
			t.Errorf("ListKeys = %+v, %v; want [%+v]", keys, err, want)
		}
	})

	t.Run("CreateForUnknownAccount", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		_, err := s.CreateKey(t.Context(), storage.NewKey{AccountID: "acct_unknown", Hash: newHash()})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("CreateKey for an unknown account: %v, want ErrNotFound", err)
		}
	})

	t.Run("CreateDuplicateHash", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		hash := newHash()
		if _, err := s.CreateKey(t.Context(), storage.NewKey{AccountID: a.ID, Hash: hash}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateKey(t.Context(), storage.NewKey{AccountID: a.ID, Hash: hash}); err == nil {
			t.Error("a second key with the same hash was stored")
		}
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		// A clock that never moves: order must not depend on timestamps.
		s := h.store(t, newClock().options())
		ctx := t.Context()
		a := mustAccount(t, s, "alice")
		other := mustAccount(t, s, "bob")
		var created []storage.APIKey
		for range 4 {
			k, _ := mustKey(t, s, a.ID)
			created = append(created, k)
		}
		mustKey(t, s, other.ID)
		revoked, err := s.RevokeKey(ctx, created[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		created[1] = revoked

		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != len(created) {
			t.Fatalf("ListKeys returned %d keys, want %d", len(keys), len(created))
		}
		for i, k := range keys {
			if want := created[len(created)-1-i]; !keysEqual(k, want) {
				t.Errorf("ListKeys[%d] = %+v, want %+v", i, k, want)
			}
		}
		if keys, err := s.ListKeys(ctx, "acct_unknown"); err != nil || len(keys) != 0 {
			t.Errorf("ListKeys(unknown) = %v, %v; want none", keys, err)
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		k, hash := mustKey(t, s, a.ID)
		_, keptHash := mustKey(t, s, a.ID)

		revokedAt := c.Advance(time.Minute)
		r, err := s.RevokeKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := k
		want.RevokedAt = revokedAt
		if !keysEqual(r, want) || r.Active() {
			t.Errorf("RevokeKey = %+v, want %+v", r, want)
		}
		if _, err := s.LookupKey(ctx, hash); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("LookupKey of a revoked key: %v, want ErrNotFound", err)
		}
		if _, err := s.LookupKey(ctx, keptHash); err != nil {
			t.Errorf("LookupKey of the account's other key: %v", err)
		}

		c.Advance(time.Minute)
		again, err := s.RevokeKey(ctx, k.ID)
		if err != nil || !keysEqual(again, want) {
			t.Errorf("second RevokeKey = %+v, %v; want it unchanged: %+v", again, err, want)
		}
		if _, err := s.RevokeKey(ctx, "key_unknown"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("RevokeKey(unknown): %v, want ErrNotFound", err)
		}
	})

	t.Run("KeyGeneration", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		b := mustAccount(t, s, "bob")
		k, hash := mustKey(t, s, a.ID)
		mustKey(t, s, b.ID)
		mustPost(t, s, a.ID, 250, "g1")
		state := func() (int64, int64) {
			t.Helper()
			bal, gen, err := s.KeyState(ctx, a.ID)
			if err != nil {
				t.Fatalf("KeyState: %v", err)
			}
			return bal, gen
		}
		bal, gen0 := state()
		o, err := s.LookupKey(ctx, hash)
		if err != nil || bal != 250 || o.KeyGeneration != gen0 {
			t.Fatalf("KeyState = %d, %d; LookupKey = %+v, %v; want balance 250 and one generation", bal, gen0, o, err)
		}
		// Creating keys and moving money leave the generation alone; every
		// revocation raises it, whoever's key it was.
		mustKey(t, s, a.ID)
		if _, gen := state(); gen != gen0 {
			t.Errorf("creating a key moved the generation %d -> %d", gen0, gen)
		}
		if _, err := s.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		_, gen1 := state()
		if gen1 <= gen0 {
			t.Errorf("RevokeKey left the generation at %d (was %d)", gen1, gen0)
		}
		if _, err := s.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, gen := state(); gen != gen1 {
			t.Errorf("revoking a revoked key moved the generation %d -> %d", gen1, gen)
		}
		if err := s.DeleteAccount(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, gen := state(); gen <= gen1 {
			t.Errorf("DeleteAccount left the generation at %d (was %d)", gen, gen1)
		}
		if _, _, err := s.KeyState(ctx, "acct_unknown"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("KeyState(unknown): %v, want ErrNotFound", err)
		}
	})

	t.Run("MaxActive", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		create := func() (storage.APIKey, error) {
			return s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: newHash(), MaxActive: 3})
		}
		var first storage.APIKey
		for i := range 3 {
			k, err := create()
			if err != nil {
				t.Fatalf("key %d of 3: %v", i+1, err)
			}
			if i == 0 {
				first = k
			}
		}
		if _, err := create(); !errors.Is(err, storage.ErrMaxKeys) {
			t.Fatalf("fourth key: %v, want ErrMaxKeys", err)
		}
		// Revoked keys do not count.
		if _, err := s.RevokeKey(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := create(); err != nil {
			t.Errorf("key after a revocation: %v", err)
		}
		// Zero means no limit.
		if _, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: newHash()}); err != nil {
			t.Errorf("key without limits: %v", err)
		}
	})

	t.Run("CreationWindow", func(t *testing.T) {
		s, a, c := h.clockedStoreWithAlice(t)
		ctx := t.Context()
		start := c.Now()
		create := func() (storage.APIKey, error) {
			return s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: newHash(), MaxPerWindow: 3, Window: time.Hour})
		}
		var first storage.APIKey
		for i := range 3 {
			k, err := create()
			if err != nil {
				t.Fatalf("key %d: %v", i+1, err)
			}
			if i == 0 {
				first = k
			}
			c.Advance(time.Minute)
		}
		// Revoking does not undo a creation.
		if _, err := s.RevokeKey(ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name    string
			at      time.Time
			wantErr error
		}{
			{"within the window", start.Add(10 * time.Minute), storage.ErrKeyCreationRate},
			{"just before the first key leaves the window", start.Add(time.Hour - time.Microsecond), storage.ErrKeyCreationRate},
			{"when the first key leaves the window", start.Add(time.Hour), nil},
			{"right after, three in the window again", start.Add(time.Hour), storage.ErrKeyCreationRate},
			{"when the second key leaves", start.Add(time.Hour + time.Minute), nil},
		}
		for _, step := range steps {
			c.Advance(step.at.Sub(c.Now()))
			if _, err := create(); !errors.Is(err, step.wantErr) {
				t.Errorf("%s: CreateKey error = %v, want %v", step.name, err, step.wantErr)
			}
		}
		// Without a window the limit is off.
		if _, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: newHash(), MaxPerWindow: 3}); err != nil {
			t.Errorf("MaxPerWindow without Window: %v", err)
		}
	})

	t.Run("ConcurrentCreateMaxActive", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		const callers, limit = 27, 25
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			_, errs[i] = procs.pick(i).CreateKey(t.Context(), storage.NewKey{AccountID: a.ID, Hash: newHash(), MaxActive: limit})
		})
		var created, refused int
		for _, err := range errs {
			switch {
			case err == nil:
				created++
			case errors.Is(err, storage.ErrMaxKeys):
				refused++
			default:
				t.Errorf("CreateKey: %v", err)
			}
		}
		if created != limit || refused != callers-limit {
			t.Errorf("%d created and %d refused with ErrMaxKeys, want %d and %d", created, refused, limit, callers-limit)
		}
		if n := activeKeys(t, procs[1], a.ID); n != limit {
			t.Errorf("%d active keys, want %d", n, limit)
		}
	})

	t.Run("ConcurrentCreateWindow", func(t *testing.T) {
		c := newClock()
		procs := h.processes(t, c.options())
		a := mustAccount(t, procs[0], "alice")
		const callers, limit = 10, 5
		errs := make([]error, callers)
		parallel(callers, func(i int) {
			_, errs[i] = procs.pick(i).CreateKey(t.Context(), storage.NewKey{AccountID: a.ID, Hash: newHash(), MaxPerWindow: limit, Window: time.Hour})
		})
		var created int
		for _, err := range errs {
			if err == nil {
				created++
			} else if !errors.Is(err, storage.ErrKeyCreationRate) {
				t.Errorf("CreateKey: %v", err)
			}
		}
		if created != limit {
			t.Errorf("%d keys created, want %d", created, limit)
		}
	})
}

func activeKeys(t *testing.T, s storage.Store, accountID string) int {
	t.Helper()
	keys, err := s.ListKeys(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if k.Active() {
			n++
		}
	}
	return n
}

// keysEqual compares keys with time.Time.Equal, which ignores locations.
func keysEqual(a, b storage.APIKey) bool {
	return a.ID == b.ID && a.AccountID == b.AccountID && a.Hint == b.Hint && a.Label == b.Label &&
		a.CreatedAt.Equal(b.CreatedAt) && a.RevokedAt.Equal(b.RevokedAt)
}
