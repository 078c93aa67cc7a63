package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// brokenLogDriver is the embedded driver whose transactions can neither
// insert request log rows nor roll back to a savepoint after that
// failure: rows that leave the transaction unusable.
type brokenLogDriver struct{ *driver }

func (d brokenLogDriver) Begin(ctx context.Context) (sqlstore.Tx, error) {
	tx, err := d.driver.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return brokenLogTx{tx}, nil
}

type brokenLogTx struct{ sqlstore.Tx }

func (t brokenLogTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if strings.HasPrefix(query, "INSERT INTO request_log") || query == "ROLLBACK TO SAVEPOINT request_log" {
		return 0, errors.New("connection trouble")
	}
	return t.Tx.Exec(ctx, query, args...)
}

// Entries that break the transaction they ride in cost no charge: the
// charges are settled again without them, whether the fast attempt or
// the careful one (after a record settled before) met them.
func TestSettleUsageBatchLoggedEntriesBreakTheTransaction(t *testing.T) {
	for _, settledBefore := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "careful"}[settledBefore], func(t *testing.T) {
			ctx := t.Context()
			db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "broken.db")))
			if err != nil {
				t.Fatal(err)
			}
			drv := &driver{db: db, querier: querier{q: db}, writer: make(chan struct{}, 1), park: parkUnhurried}
			s, err := sqlstore.New(ctx, brokenLogDriver{drv}, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a, err := s.EnsureAccount(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			rec := func(id string) storage.UsageRecord {
				return storage.UsageRecord{AccountID: a.ID, RequestID: id, Model: "m", CostCents: 5,
					Outcome: storage.OutcomeCompleted, Started: now, Finished: now}
			}
			var charged int64
			if settledBefore {
				if _, err := s.SettleUsage(ctx, rec("r1")); err != nil {
					t.Fatal(err)
				}
				charged = 5
			}
			entries := []storage.RequestLogEntry{{AccountID: a.ID, RequestID: "r1", At: now}}
			settled, logErr, err := s.SettleUsageBatchLogged(ctx, []storage.UsageRecord{rec("r1"), rec("r2")}, entries)
			if err != nil {
				t.Fatalf("the batch failed for its entries: %v", err)
			}
			if logErr == nil {
				t.Error("entries lost without a log error")
			}
			for i, x := range settled {
				if x.Err != nil {
					t.Errorf("settlement %d: %v", i, x.Err)
				}
			}
			if got, err := s.Balance(ctx, a.ID); err != nil || got != -10 {
				t.Errorf("Balance = %d, %v; want -10 (charged before: %d)", got, err, charged)
			}
		})
	}
}
