package storagetest

import (
	"errors"
	"testing"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlstore"
)

// Legacy returns a Driver on the database an Opener opens for t, without
// migrating it, so that a test can leave it as an older build would have.
// The suite closes the Driver before it opens a store on the database.
type Legacy func(t *testing.T) sqlstore.Driver

// RunUpgrades checks what the migrations do to rows older builds left:
// legacy reaches t's database first, open then migrates it.
func RunUpgrades(t *testing.T, open Opener, legacy Legacy) {
	h := &harness{open: open}
	t.Run("LedgerReferencesPerKind", func(t *testing.T) { h.testLedgerUpgrade(t, legacy) })
}

// testLedgerUpgrade starts from schema version 6, where a reference was
// unique per account whatever the entry's kind, with a top-up whose
// reference is spelt like a request's charge. After the migration to
// references per kind the ledger is as it was, row for row, and that
// request is charged in full.
func (h *harness) testLedgerUpgrade(t *testing.T, legacy Legacy) {
	ctx := t.Context()
	d := legacy(t)
	if err := sqlstore.MigrateTo(ctx, d, 6); err != nil {
		t.Fatalf("migrating to version 6: %v", err)
	}
	const acct = "acct_upgrade"
	old := []storage.LedgerEntry{
		{ID: "le_0001", AccountID: acct, AmountCents: 1000, BalanceAfterCents: 1000, Kind: storage.EntryTopUp, Reference: "req:r-1", Note: "spelt like a charge"},
		{ID: "le_0002", AccountID: acct, AmountCents: -7, BalanceAfterCents: 993, Kind: storage.EntryCharge, Reference: "req:r-0", Note: "m: 1 prompt + 1 completion tokens"},
	}
	created := newClock().Now()
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO accounts (id, name, created_at, balance_cents, ledger_seq) VALUES ($1, $2, $3, $4, $5)`,
			[]any{acct, "alice", created.UnixMicro(), int64(993), int64(len(old))}},
	}
	for i, e := range old {
		old[i].CreatedAt = created
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{`INSERT INTO ledger_entries (id, account_id, seq, amount_cents, balance_after_cents, kind, reference, note, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			[]any{e.ID, e.AccountID, int64(i + 1), e.AmountCents, e.BalanceAfterCents, string(e.Kind), e.Reference, e.Note, created.UnixMicro()}})
	}
	for _, st := range stmts {
		if _, err := d.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatalf("seeding version 6: %v", err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	s := h.store(t, storage.Options{})
	checkSchemaVersion(t, s, "after the upgrade")
	entries, err := s.Entries(ctx, acct, 0)
	if err != nil || len(entries) != len(old) {
		t.Fatalf("Entries after the upgrade = %+v, %v; want the %d entries", entries, err, len(old))
	}
	for i, e := range entries {
		if want := old[len(old)-1-i]; !entriesEqual(e, want) {
			t.Errorf("entry %d after the upgrade = %+v, want %+v", i, e, want)
		}
	}
	wantBalance(t, s, acct, 993)

	// The request the top-up's reference names is charged in full; the
	// one charged before the upgrade keeps its charge.
	if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: acct, RequestID: "r-1", CostCents: 40}); err != nil || u.CostCents != 40 {
		t.Errorf("SettleUsage r-1 = cost %d, %v; want 40", u.CostCents, err)
	}
	if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: acct, RequestID: "r-0", CostCents: 9}); err != nil || u.CostCents != 7 {
		t.Errorf("SettleUsage r-0 = cost %d, %v; want the charge posted before, 7", u.CostCents, err)
	}
	wantBalance(t, s, acct, 953)
	again, err := s.Post(ctx, storage.Entry{AccountID: acct, AmountCents: 1000, Kind: storage.EntryTopUp, Reference: "req:r-1"})
	if !errors.Is(err, storage.ErrDuplicateReference) || !entriesEqual(again, old[0]) {
		t.Errorf("the old top-up posted again = %+v, %v; want it, ErrDuplicateReference", again, err)
	}
	es, err := s.Entries(ctx, acct, 0)
	if err != nil || len(es) != 3 {
		t.Fatalf("Entries = %d, %v; want the 2 old ones and r-1's charge", len(es), err)
	}
	checkChain(t, es)
}
