package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// valuePanics is a context whose Value panics when asked whether the work
// is unhurried, which the driver asks before each statement of a write
// transaction: a way to make code inside a transaction panic.
type valuePanics struct{ context.Context }

func (c valuePanics) Value(key any) any {
	if fmt.Sprintf("%T", key) == "storage.unhurriedKey" {
		panic("inside the transaction")
	}
	return c.Context.Value(key)
}

// TestPanicInATransactionGivesTheWriteLockBack: a write transaction whose
// code panics is rolled back on the way out, so that the process, which
// recovers the panic, can still write: an open transaction would keep the
// store's one write turn for ever.
func TestPanicInATransactionGivesTheWriteLockBack(t *testing.T) {
	s, acct := openWithAccount(t, filepath.Join(t.TempDir(), "panic.db"), "panics")
	rec := func(id string) storage.UsageRecord {
		now := time.Now()
		return storage.UsageRecord{AccountID: acct.ID, RequestID: id, Model: "m", CostCents: 3,
			Outcome: storage.OutcomeCompleted, Started: now, Finished: now}
	}
	panicked := func() (p any) {
		defer func() { p = recover() }()
		_, _ = s.SettleUsageBatch(valuePanics{context.Background()}, []storage.UsageRecord{rec("in-the-panic")})
		return nil
	}()
	if panicked == nil {
		t.Fatal("the transaction did not panic; the test no longer reaches inside one")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.SettleUsage(ctx, rec("after-it")); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
	entries, err := s.Entries(ctx, acct.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Reference != storage.ChargeReferencePrefix+"after-it" {
		t.Errorf("ledger %+v: want only the charge written after the panic", entries)
	}
}
