package storagetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

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
	t.Run("RequestLogRebuilt", func(t *testing.T) { h.testRequestLogUpgrade(t, legacy) })
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

// testRequestLogUpgrade starts from schema version 13, before the
// request log lost its index on at (and, on SQLite, its rowids in a
// rebuild), with a ledger, usage records and request log entries. After
// the migration every row reads back as it was, the ledger goes on from
// where it stood, and the sweep finds the old entries.
func (h *harness) testRequestLogUpgrade(t *testing.T, legacy Legacy) {
	ctx := t.Context()
	d := legacy(t)
	if err := sqlstore.MigrateTo(ctx, d, 13); err != nil {
		t.Fatalf("migrating to version 13: %v", err)
	}
	const acct = "acct_upgrade"
	created := newClock().Now()
	entries := []storage.LedgerEntry{
		{ID: "le_0001", AccountID: acct, AmountCents: 1000, BalanceAfterCents: 1000, Kind: storage.EntryTopUp, Reference: "pay_1", Note: "top-up"},
		{ID: "le_0002", AccountID: acct, AmountCents: -7, BalanceAfterCents: 993, Kind: storage.EntryCharge, Reference: "req:r-0", Note: "m: 1 prompt + 1 completion tokens"},
	}
	usage := storage.UsageRecord{AccountID: acct, RequestID: "r-0", KeyID: "key_1", EndUser: "u1", SessionID: "s1",
		Model: "m", Upstream: "10.0.0.1:80", Stream: true, PromptTokens: 1, CompletionTokens: 1, AnswerTokens: 1,
		Estimated: true, Rounds: 2, ToolCalls: 3, Outcome: storage.OutcomeCompleted, Started: created.Add(-time.Second),
		Finished: created, CostCents: 7, RecordedAt: created}
	var logged []storage.RequestLogEntry
	for i, at := range []time.Time{created.Add(-2 * time.Hour), created.Add(-time.Hour), created} {
		logged = append(logged, storage.RequestLogEntry{
			ID: fmt.Sprintf("rq_%016x%012d", at.UnixMicro(), i), AccountID: acct, KeyID: "key_1", At: at,
			RequestID: fmt.Sprint("r-", i), ChargeID: fmt.Sprint("r-", i), EndUser: "u1", Route: "v1", Method: "POST",
			Path: "/v1/chat/completions", ModelAsked: "m", ModelServed: "m", Upstream: "10.0.0.1:80", Stream: i == 1,
			Status: 200, PromptTokens: 1, CompletionTokens: 1, CostCents: 7, Estimated: i == 2, ToolCalls: i,
			Latency: time.Duration(i+1) * time.Millisecond, FirstByte: time.Duration(i) * time.Millisecond,
		})
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := d.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("seeding version 13: %v", err)
		}
	}
	exec(`INSERT INTO accounts (id, name, created_at, balance_cents, ledger_seq) VALUES ($1, $2, $3, $4, $5)`,
		acct, "alice", created.UnixMicro(), int64(993), int64(len(entries)))
	for i, e := range entries {
		entries[i].CreatedAt = created
		exec(`INSERT INTO ledger_entries (id, account_id, seq, amount_cents, balance_after_cents, kind, reference, note, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			e.ID, e.AccountID, int64(i+1), e.AmountCents, e.BalanceAfterCents, string(e.Kind), e.Reference, e.Note, created.UnixMicro())
	}
	u := usage
	exec(`INSERT INTO usage_records (account_id, request_id, key_id, end_user, session_id, model, stream,
		prompt_tokens, completion_tokens, answer_tokens, estimated, rounds, tool_calls, outcome,
		cost_cents, started_at, finished_at, recorded_at, upstream)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		u.AccountID, u.RequestID, u.KeyID, u.EndUser, u.SessionID, u.Model, u.Stream, u.PromptTokens,
		u.CompletionTokens, u.AnswerTokens, u.Estimated, int64(u.Rounds), int64(u.ToolCalls), string(u.Outcome),
		u.CostCents, u.Started.UnixMicro(), u.Finished.UnixMicro(), u.RecordedAt.UnixMicro(), u.Upstream)
	for _, e := range logged {
		exec(`INSERT INTO request_log (id, account_id, key_id, at, request_id, charge_id, end_user, route, method, path,
			model_asked, model_served, upstream, stream, status, error_code, prompt_tokens, completion_tokens,
			cost_cents, estimated, tool_calls, latency_us, first_byte_us)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
			e.ID, e.AccountID, e.KeyID, e.At.UnixMicro(), e.RequestID, e.ChargeID, e.EndUser, e.Route, e.Method, e.Path,
			e.ModelAsked, e.ModelServed, e.Upstream, e.Stream, int64(e.Status), e.ErrorCode, e.PromptTokens,
			e.CompletionTokens, e.CostCents, e.Estimated, int64(e.ToolCalls), e.Latency.Microseconds(), e.FirstByte.Microseconds())
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	s := h.store(t, storage.Options{})
	checkSchemaVersion(t, s, "after the upgrade")
	got, err := s.Entries(ctx, acct, 0)
	if err != nil || len(got) != len(entries) {
		t.Fatalf("Entries after the upgrade = %+v, %v; want the %d entries", got, err, len(entries))
	}
	for i, e := range got {
		if want := entries[len(entries)-1-i]; !entriesEqual(e, want) {
			t.Errorf("entry %d after the upgrade = %+v, want %+v", i, e, want)
		}
	}
	if after, err := s.EntriesAfter(ctx, acct, "le_0002", 0); err != nil || len(after) != 1 || !entriesEqual(after[0], entries[0]) {
		t.Errorf("EntriesAfter(le_0002) = %+v, %v; want the top-up", after, err)
	}
	records, err := s.UsageRecords(ctx, acct, 0)
	if err != nil || len(records) != 1 || !usageEqual(records[0], usage) {
		t.Errorf("UsageRecords after the upgrade = %+v, %v; want %+v", records, err, usage)
	}
	log, ok := s.(interface {
		storage.RequestLog
		storage.LoggedSettler
	})
	if !ok {
		t.Fatalf("%T keeps no request log", s)
	}
	page, err := log.RequestLogPage(ctx, acct, storage.RequestLogQuery{})
	if err != nil || len(page) != len(logged) {
		t.Fatalf("RequestLogPage after the upgrade = %+v, %v; want the %d entries", page, err, len(logged))
	}
	for i, e := range page {
		if want := logged[len(logged)-1-i]; !logEntryEqual(e, want) {
			t.Errorf("request log entry %d after the upgrade = %+v, want %+v", i, e, want)
		}
	}

	// The ledger goes on from where it stood: a request charged before
	// keeps its charge, a new one is charged after it, an old reference
	// is still taken.
	if u, err := s.SettleUsage(ctx, storage.UsageRecord{AccountID: acct, RequestID: "r-0", CostCents: 9}); err != nil || u.CostCents != 7 {
		t.Errorf("SettleUsage r-0 = cost %d, %v; want the charge settled before, 7", u.CostCents, err)
	}
	settled, logErr, err := log.SettleUsageBatchLogged(ctx,
		[]storage.UsageRecord{{AccountID: acct, RequestID: "r-1", CostCents: 40}},
		[]storage.RequestLogEntry{{AccountID: acct, At: created.Add(time.Second), RequestID: "r-1", ChargeID: "r-1"}})
	if err != nil || logErr != nil || len(settled) != 1 || settled[0].Err != nil {
		t.Fatalf("SettleUsageBatchLogged r-1 = %+v, %v, %v", settled, logErr, err)
	}
	wantBalance(t, s, acct, 953)
	if _, err := s.Post(ctx, storage.Entry{AccountID: acct, AmountCents: 1000, Kind: storage.EntryTopUp, Reference: "pay_1"}); !errors.Is(err, storage.ErrDuplicateReference) {
		t.Errorf("the old top-up posted again: %v, want ErrDuplicateReference", err)
	}
	es, err := s.Entries(ctx, acct, 0)
	if err != nil || len(es) != 3 {
		t.Fatalf("Entries = %d, %v; want the 2 old ones and r-1's charge", len(es), err)
	}
	checkChain(t, es)

	// The sweep finds the old entries by their ids.
	if n, err := log.PruneRequestLog(ctx, created.Add(-time.Minute), 0); err != nil || n != 2 {
		t.Errorf("PruneRequestLog = %d, %v; want the 2 entries older than a minute", n, err)
	}
	if page, err := log.RequestLogPage(ctx, acct, storage.RequestLogQuery{}); err != nil || len(page) != 2 ||
		page[0].RequestID != "r-1" || page[1].RequestID != logged[2].RequestID {
		t.Errorf("RequestLogPage after pruning = %+v, %v; want r-1's and the newest old one", page, err)
	}
}

// logEntryEqual compares request log entries with time.Time.Equal.
func logEntryEqual(a, b storage.RequestLogEntry) bool {
	ta, tb := a.At, b.At
	a.At, b.At = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}
