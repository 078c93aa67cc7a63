package storagetest

import (
	"context"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

func (h *harness) testMigrations(t *testing.T) {
	t.Run("Reopen", func(t *testing.T) {
		ctx := t.Context()
		first := h.open(t, storage.Options{})
		checkSchemaVersion(t, first, "after the first open")
		a := mustAccount(t, first, "alice")
		_, hash := mustKey(t, first, a.ID)
		if _, err := first.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: 42, Kind: storage.EntryTopUp, Reference: "r"}); err != nil {
			t.Fatal(err)
		}
		if err := first.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}

		// Opening migrated databases again must find nothing to do and
		// lose nothing.
		for range 2 {
			s := h.open(t, storage.Options{})
			checkSchemaVersion(t, s, "after reopening")
			if again := mustAccount(t, s, "alice"); again.ID != a.ID {
				t.Errorf("after reopening, alice is %s, want %s", again.ID, a.ID)
			}
			if o, err := s.LookupKey(ctx, hash); err != nil || o.AccountID != a.ID {
				t.Errorf("after reopening, LookupKey = %+v, %v", o, err)
			}
			wantBalance(t, s, a.ID, 42)
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
	})

	t.Run("ConcurrentOpen", func(t *testing.T) {
		// Processes starting together on a fresh database: one migrates,
		// the others wait and find the schema in place.
		const n = 4
		stores := make([]storage.Store, n)
		parallel(n, func(i int) { stores[i] = h.store(t, storage.Options{}) })
		if t.Failed() {
			t.FailNow()
		}
		var ids []string
		for _, s := range stores {
			ids = append(ids, mustAccount(t, s, "alice").ID)
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Errorf("stores disagree on alice: %v", ids)
				break
			}
		}
	})
}

// checkSchemaVersion checks that s, just opened, has every migration
// applied.
func checkSchemaVersion(t *testing.T, s storage.Store, when string) {
	t.Helper()
	vs, ok := s.(interface {
		SchemaVersion(context.Context) (int, error)
	})
	if !ok {
		t.Fatalf("%T does not tell its schema version", s)
	}
	if v, err := vs.SchemaVersion(t.Context()); err != nil || v != sqlstore.LatestVersion() || v == 0 {
		t.Errorf("%s, SchemaVersion = %d, %v; want %d", when, v, err, sqlstore.LatestVersion())
	}
}
