package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// usageColumnCount is the number of usageColumns.
const usageColumnCount = 19

const usageColumns = `account_id, request_id, key_id, end_user, session_id, model, stream,
	prompt_tokens, completion_tokens, answer_tokens, estimated, rounds, tool_calls, outcome,
	cost_cents, started_at, finished_at, recorded_at, upstream`

// SettleUsage writes the usage record u and debits u.CostCents from the
// account's ledger, as a charge with reference "req:" + u.RequestID, in
// one transaction. It returns the record as stored.
//
// Recording a request id again changes nothing and returns the record
// already stored, with its cost, so that a retried record never charges
// twice. The transaction starts by locking the account's ledger, so of
// concurrent records of one request, in any process, exactly one writes
// and the others find its record. Should the ledger already hold the
// charge without a record, the record is written with that charge and
// nothing is debited again.
//
// Like Post, SettleUsage accepts deleted accounts, so that requests in
// flight when the account was deleted still settle, and does not refuse
// to overdraw. storage.ErrNotFound if the account never existed.
func (s *Store) SettleUsage(ctx context.Context, u storage.UsageRecord) (storage.UsageRecord, error) {
	if err := checkUsage(u); err != nil {
		return storage.UsageRecord{}, err
	}
	now := s.now()
	var stored storage.UsageRecord
	err := s.inTx(ctx, func(tx Tx) error {
		head, err := s.lockLedger(ctx, tx, u.AccountID)
		if err != nil {
			return err
		}
		var next ledgerHead
		stored, next, err = settleOne(ctx, tx, head, u, now)
		if err != nil {
			return err
		}
		if err := markKeysUsed(ctx, tx, []storage.UsageRecord{u}, nil, now); err != nil || next == head {
			return err
		}
		return writeHead(ctx, tx, u.AccountID, next, now)
	})
	if err != nil && s.db.IsUniqueViolation(err) {
		// Only reachable if the ledger lock did not serialise us; the
		// answer is still the record that won.
		if existing, lookupErr := usageByRequest(ctx, s.db, u.AccountID, u.RequestID); lookupErr == nil {
			return existing, nil
		}
	}
	if err != nil {
		return storage.UsageRecord{}, wrap(err, "recording usage")
	}
	return stored, nil
}

// SettleUsageBatch settles records in one transaction. It first locks
// the ledgers of every account the batch charges, in the order of their
// ids, so that two batches (or a batch and a single settlement) in
// different processes can wait for each other but never deadlock.
//
// It tries the fast way first: every charge and usage record appended
// with a few multi-row INSERTs, each account's running total written
// once. That is right whenever no record of the batch was settled
// before, no request comes twice and the database takes every value;
// should any of that not hold, the unique indexes or the database refuse
// the transaction, and the batch is settled again the careful way: each
// record in a savepoint, checked and written as SettleUsage would, so
// that a record the database refuses is rolled back alone.
func (s *Store) SettleUsageBatch(ctx context.Context, records []storage.UsageRecord) ([]storage.Settlement, error) {
	out, _, err := s.settleBatch(ctx, records, nil)
	return out, err
}

// SettleUsageBatchLogged settles records as SettleUsageBatch does and
// appends entries, as AppendRequestLog would, in the same transaction:
// one commit for both. The entries go last, in a savepoint of their own,
// so that entries the database refuses are rolled back alone and the
// charges commit all the same.
func (s *Store) SettleUsageBatchLogged(ctx context.Context, records []storage.UsageRecord,
	entries []storage.RequestLogEntry) (settled []storage.Settlement, logErr, err error) {
	args := requestLogArgs(entries)
	defer putArgs(args)
	settled, logErr, err = s.settleBatch(ctx, records, *args)
	if err != nil {
		return nil, nil, err
	}
	return settled, wrap(logErr, "appending to the request log"), nil
}

// settleBatch is SettleUsageBatch, with logArgs, the request log's rows
// (requestLogArgs), appended in the same transaction when there are any.
func (s *Store) settleBatch(ctx context.Context, records []storage.UsageRecord, logArgs []any) ([]storage.Settlement, error, error) {
	// checked is why records failed checkUsage; nil while none has.
	var checked []error
	accounts := make([]string, 0, len(records))
	for i, u := range records {
		if err := checkUsage(u); err != nil {
			if checked == nil {
				checked = make([]error, len(records))
			}
			checked[i] = err
			continue
		}
		accounts = append(accounts, u.AccountID)
	}
	out := make([]storage.Settlement, len(records))
	reset := func() {
		for i := range out {
			out[i] = storage.Settlement{}
			if checked != nil {
				out[i].Err = checked[i]
			}
		}
	}
	reset()
	if len(accounts) == 0 {
		var logErr error
		if len(logArgs) > 0 {
			logErr = s.appendRequestLog(ctx, logArgs)
		}
		return out, logErr, nil
	}
	slices.Sort(accounts)
	accounts = slices.Compact(accounts)
	now := s.now()
	var err, logErr error
	attempts := []bool{true, false} // fast, then careful
	for a := 0; a < len(attempts); a++ {
		fast, logBroke := attempts[a], false
		reset()
		err = s.inTx(ctx, func(tx Tx) error {
			heads, err := s.lockLedgers(ctx, tx, accounts)
			if err != nil {
				return err
			}
			var moved map[string]ledgerHead
			if fast {
				moved, err = s.appendBatch(ctx, tx, records, out, heads, now)
			} else {
				moved, err = settleEach(ctx, tx, records, out, heads, now)
			}
			if err != nil {
				return err
			}
			if err := markKeysUsed(ctx, tx, records, out, now); err != nil {
				return err
			}
			for _, id := range accounts {
				if head, ok := moved[id]; ok {
					if err := writeHead(ctx, tx, id, head, now); err != nil {
						return err
					}
				}
			}
			if len(logArgs) == 0 {
				return nil
			}
			logErr, err = s.appendLogged(ctx, tx, logArgs)
			if err != nil {
				// The rows broke the transaction itself: the charges
				// are settled again without them.
				logArgs, logBroke = nil, true
				if logErr == nil {
					logErr = err
				}
			}
			return err
		})
		if err == nil {
			return out, logErr, nil
		}
		if ctx.Err() != nil {
			break
		}
		if logBroke && a == len(attempts)-1 {
			// The last attempt failed for its entries alone: one more
			// without them, so that entries never cost a charge.
			attempts = append(attempts, false)
		}
	}
	return nil, nil, wrap(err, "recording usage")
}

// appendLogged appends the request log's rows in a savepoint, so that
// rows the database refuses are rolled back alone: logErr is why they
// were. err is for the transaction, which the rows left unusable (the
// rollback to the savepoint failed as well).
func (s *Store) appendLogged(ctx context.Context, tx Tx, args []any) (logErr, err error) {
	if _, err := tx.Exec(ctx, `SAVEPOINT request_log`); err != nil {
		return nil, err
	}
	if logErr = s.appendLogRows(ctx, tx, args); logErr != nil {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT request_log`); err != nil {
			return logErr, err
		}
	}
	_, err = tx.Exec(ctx, `RELEASE SAVEPOINT request_log`)
	return logErr, err
}

// lockLedgers locks the ledgers of accounts, in their order, and returns
// their heads; an account that never existed has a nil head.
func (s *Store) lockLedgers(ctx context.Context, tx Tx, accounts []string) (map[string]*ledgerHead, error) {
	heads := make(map[string]*ledgerHead, len(accounts))
	for _, id := range accounts {
		head, err := s.lockLedger(ctx, tx, id)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			heads[id] = nil
		case err != nil:
			return nil, err
		default:
			heads[id] = &head
		}
	}
	return heads, nil
}

// chargeable yields the index of each record of a batch that passed
// checkUsage, with the head of its account's ledger. A record whose
// account does not exist gets ErrNotFound in out and is not yielded.
func chargeable(records []storage.UsageRecord, out []storage.Settlement, heads map[string]*ledgerHead) iter.Seq2[int, *ledgerHead] {
	return func(yield func(int, *ledgerHead) bool) {
		for i, u := range records {
			if out[i].Err != nil {
				continue
			}
			head := heads[u.AccountID]
			if head == nil {
				out[i].Err = storage.ErrNotFound
				continue
			}
			if !yield(i, head) {
				return
			}
		}
	}
}

// settleEach settles each record of a batch in a savepoint, as
// SettleUsage would, and returns the heads of the ledgers it appended
// to. A record the database refuses gets its error in out and is rolled
// back alone; an error returned is for the transaction.
func settleEach(ctx context.Context, tx Tx, records []storage.UsageRecord, out []storage.Settlement,
	heads map[string]*ledgerHead, now time.Time) (map[string]ledgerHead, error) {
	moved := make(map[string]ledgerHead)
	for i, head := range chargeable(records, out, heads) {
		u := records[i]
		if _, err := tx.Exec(ctx, `SAVEPOINT settle_usage`); err != nil {
			return nil, err
		}
		stored, next, err := settleOne(ctx, tx, *head, u, now)
		if err != nil {
			// The savepoint undoes this record only. If even that
			// fails, the transaction is broken and so is the batch.
			if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT settle_usage`); rerr != nil {
				return nil, err
			}
			out[i].Err = wrap(err, "recording usage")
			continue
		}
		if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT settle_usage`); err != nil {
			return nil, err
		}
		out[i].Record = stored
		if next != *head {
			*head = next
			moved[u.AccountID] = next
		}
	}
	return moved, nil
}

// appendBatch appends a charge and a usage record for every record of a
// batch that passed checkUsage and whose account exists, assuming none
// was settled before and none comes twice, and returns the heads of the
// ledgers it appended to. If the assumption is wrong, a unique index
// refuses the INSERT and the error is returned: the caller rolls back.
func (s *Store) appendBatch(ctx context.Context, tx Tx, records []storage.UsageRecord, out []storage.Settlement,
	heads map[string]*ledgerHead, now time.Time) (map[string]ledgerHead, error) {
	moved := make(map[string]ledgerHead)
	entryArgs := takeArgs(len(records) * 9)
	defer putArgs(entryArgs)
	usageArgs := takeArgs(len(records) * usageColumnCount)
	defer putArgs(usageArgs)
	at := micros(now)
	// Values every row of the batch, or of an account, shares are put
	// in an interface once: each conversion of an int64 or a string
	// allocates.
	atArg := any(at)
	// Accounts and keys apart from models, so that a batch of many
	// accounts does not push its few models out.
	var ids, words sharedArgs
	text, ends := chargeTexts(records, out, heads, at)
	for i, head := range chargeable(records, out, heads) {
		u := records[i]
		head.balance -= u.CostCents
		head.seq++
		moved[u.AccountID] = *head
		account := ids.string(u.AccountID)
		refEnd, noteEnd := ends[0], ends[1]
		id, ref, note := text[:chargeIDLen], text[chargeIDLen:refEnd], text[refEnd:noteEnd]
		text, ends = text[noteEnd:], ends[2:]
		*entryArgs = append(*entryArgs, id, account, -u.CostCents, head.balance,
			string(storage.EntryCharge), ref, note, atArg, head.seq)
		stored := u
		stored.RecordedAt = fromMicros(at)
		out[i].Record = stored
		*usageArgs = append(*usageArgs, account, stored.RequestID, ids.string(stored.KeyID), stored.EndUser,
			stored.SessionID, words.string(stored.Model), stored.Stream, stored.PromptTokens, stored.CompletionTokens,
			stored.AnswerTokens, stored.Estimated, int64(stored.Rounds), int64(stored.ToolCalls),
			outcomeArg(stored.Outcome), stored.CostCents, micros(stored.Started), micros(stored.Finished), atArg,
			stored.Upstream)
	}
	positional := s.dialect.PositionalParams
	if err := appendRows(ctx, tx, "ledger_entries", entryCopyColumns, positional, *entryArgs); err != nil {
		return nil, err
	}
	if err := appendRows(ctx, tx, "usage_records", usageCopyColumns, positional, *usageArgs); err != nil {
		return nil, err
	}
	return moved, nil
}

// chargeIDLen is the length of a charge's ledger entry id.
const chargeIDLen = len("le_") + timeIDChars

// chargeTexts are the ids, references and notes of the ledger entries of
// the records chargeable yields, one after the other in one string: one
// allocation for the batch rather than one a charge. ends has, for each
// entry, where its reference and its note end, counted from the end of
// the entry before; its id is the chargeIDLen bytes that start it.
func chargeTexts(records []storage.UsageRecord, out []storage.Settlement, heads map[string]*ledgerHead, at int64) (string, []int) {
	buf := takeText()
	defer putText(buf)
	text := *buf
	ends := make([]int, 0, 2*len(records))
	var random randomBase62 // one read of crypto/rand for many ids
	for i := range chargeable(records, out, heads) {
		u := &records[i]
		start := len(text)
		text = random.appendTimeID(text, "le_", at)
		text = append(append(text, storage.ChargeReferencePrefix...), u.RequestID...)
		ends = append(ends, len(text)-start)
		text = appendChargeNote(text, *u)
		ends = append(ends, len(text)-start)
	}
	*buf = text
	return string(text), ends
}

// textPool keeps the buffers batches' strings are made in (chargeTexts,
// requestLogArgs), so that a batch allocates only the strings.
var textPool sync.Pool // *[]byte

// maxPooledText bounds the buffers kept: 256 charges' texts and then some.
const maxPooledText = 64 << 10

func takeText() *[]byte {
	if b, ok := textPool.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

func putText(b *[]byte) {
	if cap(*b) > maxPooledText {
		return
	}
	*b = (*b)[:0]
	textPool.Put(b)
}

// argsPool keeps the argument slices of batches' rows for the next
// batch: at 28 values a charge, a slice made for every batch was about a
// sixth of what a charge allocated.
var argsPool sync.Pool // *[]any

// maxPooledArgs bounds the slices kept, so that one huge batch does not
// keep its memory for good: 256 charges of the widest table.
const maxPooledArgs = 256 * requestLogColumnCount

func takeArgs(n int) *[]any {
	if p, ok := argsPool.Get().(*[]any); ok && cap(*p) >= n {
		return p
	}
	p := make([]any, 0, n)
	return &p
}

// putArgs hands args back once the database has its values.
func putArgs(args *[]any) {
	if cap(*args) > maxPooledArgs {
		return
	}
	clear(*args) // the strings of this batch are not the pool's to keep
	*args = (*args)[:0]
	argsPool.Put(args)
}

// sharedArgs puts the strings many rows of a batch repeat (account,
// key, model; a request log entry's route, method and path) in an
// interface once each.
type sharedArgs struct {
	last [8]struct {
		s string
		v any
	}
	next int
}

// string is s as an argument, the interface of an earlier row's equal
// string where one of the last few had it.
func (b *sharedArgs) string(s string) any {
	for i := range b.last {
		if e := &b.last[i]; e.v != nil && e.s == s {
			return e.v
		}
	}
	v := any(s)
	b.last[b.next] = struct {
		s string
		v any
	}{s, v}
	b.next = (b.next + 1) % len(b.last)
	return v
}

// outcomeArg is o as an argument: the outcomes there are need no
// conversion, being constants.
func outcomeArg(o storage.Outcome) any {
	switch o {
	case storage.OutcomeCompleted:
		return string(storage.OutcomeCompleted)
	case storage.OutcomeClientGone:
		return string(storage.OutcomeClientGone)
	case storage.OutcomeUpstreamFailed:
		return string(storage.OutcomeUpstreamFailed)
	case storage.OutcomeFailed:
		return string(storage.OutcomeFailed)
	}
	return string(o)
}

// entryCopyColumns and usageCopyColumns name the columns of a batch's
// rows, in the order of their values, for COPY.
var (
	entryCopyColumns = splitColumns(entryColumns + ", seq")
	usageCopyColumns = splitColumns(usageColumns)
)

func splitColumns(list string) []string {
	cols := strings.Split(list, ",")
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c)
	}
	return cols
}

// copyAtLeast is the fewest rows appendRows copies: a COPY takes two
// round trips (pgx asks for the columns' types first), as many as the
// INSERTs of 17 to 32 rows (16 and 1, 16 and 16). From 17 rows on, the
// COPY costs no round trip more and allocates less than half: pgx
// rebuilds its parameter buffers for every statement of more than 64
// parameters, which a 16-row INSERT has (BenchmarkSettleUsageBatch,
// batch=32: 6.4 KB a charge with INSERTs, 3.0 KB with COPY, and 1,112
// bytes of WAL instead of 1,196).
const copyAtLeast = 17

// appendRows inserts the rows of args, a value per column each, into
// table: in one COPY where tx is a RowCopier and there are at least
// copyAtLeast, else in the multi-row INSERTs of insertRows.
func appendRows(ctx context.Context, tx Tx, table string, columns []string, positional bool, args []any) error {
	cols := len(columns)
	if len(args) == 0 {
		return nil
	}
	c, ok := tx.(RowCopier)
	if !ok || len(args)/cols < copyAtLeast {
		return insertRows(ctx, tx, table, columns, positional, args)
	}
	rows := make([][]any, 0, len(args)/cols)
	for ; len(args) >= cols; args = args[cols:] {
		rows = append(rows, args[:cols:cols])
	}
	_, err := c.CopyRows(ctx, table, columns, rows)
	return err
}

// insertChunks are the row counts of the multi-row INSERTs of
// insertRows, largest first. Few distinct sizes keep few statements
// prepared, on the driver and on the database. Larger statements save
// some CPU per row (with their shared values bound once, chunks of 32
// and 64 rows took 5% and 9% fewer instructions a charge in
// BenchmarkWriterBatch) but run longer without a break: on SQLite a
// statement holds the processor from its first row to its last (see the
// embedded store's txn.Exec), and a request waits for it.
var insertChunks = []int{16, 4, 1}

// insertRows inserts the rows of args into table's columns in INSERTs of
// insertChunks rows. The placeholders are ? if positional, else $1, $2,
// ...
//
// A value every row of an INSERT has in the same column (the account,
// key and model of a node's traffic, the batch's time, empty texts) is
// bound once, as a numbered parameter each row names, rather than once a
// row: binding costs modernc's SQLite about as much per value as
// inserting it (a C copy of every text, a mutex, the old value
// released), and in the gateway's batches most of a row's values are
// those of its neighbours (BenchmarkWriterBatch in storage/sqlite).
func insertRows(ctx context.Context, tx Tx, table string, columns []string, positional bool, args []any) error {
	cols := len(columns)
	if grouped := groupByAccount(args, columns); grouped != nil {
		defer putArgs(grouped)
		args = *grouped
	}
	for rows := len(args) / cols; rows > 0; {
		n := insertChunks[len(insertChunks)-1]
		for _, c := range insertChunks {
			if c <= rows {
				n = c
				break
			}
		}
		chunk := args[:n*cols]
		shared := sharedColumns(table, chunk, cols, n)
		q := insertStatement(table, columns, n, shared, positional)
		if shared == 0 {
			if _, err := tx.Exec(ctx, q, chunk...); err != nil {
				return err
			}
		} else if err := execShared(ctx, tx, q, chunk, cols, shared); err != nil {
			return err
		}
		args, rows = args[n*cols:], rows-n
	}
	return nil
}

// groupByAccount is args with its rows in the order of their account_id
// column, the rows of one account in the order they came, from argsPool;
// nil where they are in that order already, or there is no such column.
// Rows of one account side by side share its id and most often its key
// in an INSERT, and go into the B-trees keyed by account one after the
// other, near where the one before went: batches of charges to 4
// accounts in turn cost 8% fewer instructions a charge
// (BenchmarkWriterBatch). No statement of a batch depends on the order
// of its rows: the ledger's seq numbers are given before.
func groupByAccount(args []any, columns []string) *[]any {
	cols := len(columns)
	acc := slices.Index(columns, "account_id")
	rows := len(args) / cols
	if acc < 0 || rows < 3 {
		return nil
	}
	account := func(r int) string {
		s, _ := args[r*cols+acc].(string)
		return s
	}
	sorted := true
	for r := 1; r < rows && sorted; r++ {
		sorted = account(r-1) <= account(r)
	}
	if sorted {
		return nil
	}
	order := make([]int, rows)
	for r := range order {
		order[r] = r
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(account(a), account(b)) })
	grouped := takeArgs(len(args))
	for _, r := range order {
		*grouped = append(*grouped, args[r*cols:(r+1)*cols]...)
	}
	return grouped
}

// execShared runs q, an insertStatement of the rows of chunk with the
// columns of shared bound once: their values (the first row's) first,
// then each row's own.
func execShared(ctx context.Context, tx Tx, q string, chunk []any, cols int, shared uint64) error {
	args := takeArgs(len(chunk))
	defer putArgs(args)
	for c := range cols {
		if shared&(1<<c) != 0 {
			*args = append(*args, chunk[c])
		}
	}
	for ; len(chunk) >= cols; chunk = chunk[cols:] {
		for c, v := range chunk[:cols] {
			if shared&(1<<c) == 0 {
				*args = append(*args, v)
			}
		}
	}
	_, err := tx.Exec(ctx, q, *args...)
	return err
}

// maxSharedShapes bounds the sets of shared columns an INSERT of one
// table and row count is prepared with: each is a statement of its own,
// prepared on every connection that runs it. Past it a chunk shares the
// columns of the largest set already in use that it can, or none.
const maxSharedShapes = 8

// sharedShapes are the sets of shared columns in use, by table and row
// count.
var sharedShapes sync.Map // shapeKey -> *shapeSet

type shapeKey struct {
	table string
	rows  int
}

type shapeSet struct {
	mu    sync.Mutex
	masks []uint64
}

// sharedColumns is the set of columns (bit c for column c) whose value
// is the same in every row of chunk, as far as the statements in use
// allow; 0 where no column is shared.
func sharedColumns(table string, chunk []any, cols, rows int) uint64 {
	if rows < 2 || cols > 64 {
		return 0
	}
	var same uint64
	for c := range cols {
		if sameInColumn(chunk[c:], cols) {
			same |= 1 << c
		}
	}
	if same == 0 {
		return 0
	}
	v, _ := sharedShapes.Load(shapeKey{table, rows})
	if v == nil {
		v, _ = sharedShapes.LoadOrStore(shapeKey{table, rows}, new(shapeSet))
	}
	set := v.(*shapeSet)
	set.mu.Lock()
	defer set.mu.Unlock()
	var best uint64
	for _, m := range set.masks {
		if m == same {
			return same
		}
		if m&same == m && bits.OnesCount64(m) > bits.OnesCount64(best) {
			best = m
		}
	}
	if len(set.masks) < maxSharedShapes {
		set.masks = append(set.masks, same)
		return same
	}
	return best
}

// sameInColumn tells whether every row's value in a column, vals[0],
// vals[cols], vals[2*cols], ..., is the first one's, as sameArg would:
// the type is switched on once for the column rather than for each row.
func sameInColumn(vals []any, cols int) bool {
	switch x := vals[0].(type) {
	case string:
		for i := cols; i < len(vals); i += cols {
			if y, ok := vals[i].(string); !ok || y != x {
				return false
			}
		}
	case int64:
		for i := cols; i < len(vals); i += cols {
			if y, ok := vals[i].(int64); !ok || y != x {
				return false
			}
		}
	default:
		for i := cols; i < len(vals); i += cols {
			if !sameArg(x, vals[i]) {
				return false
			}
		}
	}
	return true
}

// sameArg tells whether a and b are the same value of the same type, of
// the types the batches' rows hold; any other type is never the same,
// so that no value is compared that cannot be.
func sameArg(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// insertStatements caches the text of multi-row INSERTs.
var insertStatements sync.Map // statementKey -> string

type statementKey struct {
	table      string
	rows       int
	shared     uint64
	positional bool
}

// insertStatement is the INSERT of rows rows into table's columns, those
// of shared named first and bound once, as the first parameters, which
// every row names by number; the others follow, a parameter each in each
// row.
func insertStatement(table string, columns []string, rows int, shared uint64, positional bool) string {
	k := statementKey{table, rows, shared, positional}
	if q, ok := insertStatements.Load(k); ok {
		return q.(string)
	}
	cols := len(columns)
	order := make([]int, 0, cols) // the columns as the statement names them
	for c := range cols {
		if shared&(1<<c) != 0 {
			order = append(order, c)
		}
	}
	nShared := len(order)
	for c := range cols {
		if shared&(1<<c) == 0 {
			order = append(order, c)
		}
	}
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	for i, c := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(columns[c])
	}
	b.WriteString(") VALUES ")
	param := nShared // the last parameter numbered so far
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range order {
			if i > 0 {
				b.WriteString(", ")
			}
			switch {
			case i < nShared && positional:
				// SQLite numbers a bare ? one past the highest number
				// before it: the shared ones come first in every row, so
				// the bare ones after them number on from the last.
				fmt.Fprintf(&b, "?%d", i+1)
			case i < nShared:
				fmt.Fprintf(&b, "$%d", i+1)
			case positional:
				b.WriteByte('?')
			default:
				param++
				fmt.Fprintf(&b, "$%d", param)
			}
		}
		b.WriteByte(')')
	}
	q, _ := insertStatements.LoadOrStore(k, b.String())
	return q.(string)
}

// chargeNote is the note of a request's ledger charge.
func chargeNote(u storage.UsageRecord) string {
	return string(appendChargeNote(make([]byte, 0, len(u.Model)+48), u))
}

// appendChargeNote appends chargeNote(u) to b.
func appendChargeNote(b []byte, u storage.UsageRecord) []byte {
	b = append(b, u.Model...)
	b = append(b, ": "...)
	b = strconv.AppendInt(b, u.PromptTokens, 10)
	b = append(b, " prompt + "...)
	b = strconv.AppendInt(b, u.CompletionTokens, 10)
	b = append(b, " completion tokens"...)
	return b
}

// checkUsage refuses records that no store could settle.
func checkUsage(u storage.UsageRecord) error {
	switch {
	case u.RequestID == "":
		return errors.New("storage: usage record needs a request id")
	case u.CostCents < 0:
		return fmt.Errorf("storage: usage record of request %s has a negative cost", u.RequestID)
	}
	return nil
}

// settledQuery tells whether a request already has its usage record and
// whether, and for how much, its charge is already in the ledger: one
// round trip for what most records do not have. Only an entry of kind
// charge is the request's charge: another kind's entry with the same
// reference (a top-up whose reference a client spelt "req:...") is no
// answer for it.
const settledQuery = `SELECT
	(SELECT COUNT(*) FROM usage_records WHERE account_id = $1 AND request_id = $2),
	(SELECT COUNT(*) FROM ledger_entries WHERE account_id = $3 AND kind = '` + string(storage.EntryCharge) + `' AND reference = $4),
	COALESCE((SELECT amount_cents FROM ledger_entries WHERE account_id = $5 AND kind = '` + string(storage.EntryCharge) + `' AND reference = $6), 0)`

// settleOne writes u's usage record and, unless the ledger has it
// already, its charge as the entry after head, and returns the record as
// stored and the ledger head it leaves (head itself when nothing was
// appended). A request that has its record already gets that record,
// and nothing is written. The caller holds the ledger lock of u's
// account and writes the returned head back.
func settleOne(ctx context.Context, tx Tx, head ledgerHead, u storage.UsageRecord, now time.Time) (storage.UsageRecord, ledgerHead, error) {
	ref := storage.ChargeReferencePrefix + u.RequestID
	var recorded, charged, chargedCents int64
	if err := tx.QueryRow(ctx, settledQuery, u.AccountID, u.RequestID, u.AccountID, ref, u.AccountID, ref).
		Scan(&recorded, &charged, &chargedCents); err != nil {
		return storage.UsageRecord{}, head, err
	}
	if recorded > 0 {
		stored, err := usageByRequest(ctx, tx, u.AccountID, u.RequestID)
		return stored, head, err
	}
	stored, next := u, head
	stored.RecordedAt = fromMicros(micros(now))
	if charged > 0 {
		stored.CostCents = -chargedCents
	} else {
		var err error
		_, next, err = insertEntry(ctx, tx, head, storage.Entry{
			AccountID:   u.AccountID,
			AmountCents: -u.CostCents,
			Kind:        storage.EntryCharge,
			Reference:   ref,
			Note:        chargeNote(u),
		}, now)
		if err != nil {
			return storage.UsageRecord{}, head, err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO usage_records (`+usageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		stored.AccountID, stored.RequestID, stored.KeyID, stored.EndUser, stored.SessionID, stored.Model, stored.Stream,
		stored.PromptTokens, stored.CompletionTokens, stored.AnswerTokens, stored.Estimated,
		int64(stored.Rounds), int64(stored.ToolCalls), stored.Outcome, stored.CostCents,
		micros(stored.Started), micros(stored.Finished), micros(now), stored.Upstream)
	if err != nil {
		return storage.UsageRecord{}, head, err
	}
	return stored, next, nil
}

// UsageRecords lists up to limit usage records of an account, the latest
// finished first; all of them if limit <= 0. An unknown account has none.
func (s *Store) UsageRecords(ctx context.Context, accountID string, limit int) ([]storage.UsageRecord, error) {
	query := `SELECT ` + usageColumns + ` FROM usage_records WHERE account_id = $1
		ORDER BY finished_at DESC, request_id DESC` + limitClause(limit)
	records, err := queryAll(ctx, s.db, scanUsage, query, accountID)
	return records, wrap(err, "listing usage records")
}

func usageByRequest(ctx context.Context, q Querier, accountID, requestID string) (storage.UsageRecord, error) {
	return scanUsage(q.QueryRow(ctx, `SELECT `+usageColumns+` FROM usage_records
		WHERE account_id = $1 AND request_id = $2`, accountID, requestID))
}

func scanUsage(r Row) (storage.UsageRecord, error) {
	var u storage.UsageRecord
	var rounds, toolCalls, started, finished, recorded int64
	err := r.Scan(&u.AccountID, &u.RequestID, &u.KeyID, &u.EndUser, &u.SessionID, &u.Model, &u.Stream,
		&u.PromptTokens, &u.CompletionTokens, &u.AnswerTokens, &u.Estimated, &rounds, &toolCalls, &u.Outcome,
		&u.CostCents, &started, &finished, &recorded, &u.Upstream)
	if err != nil {
		return storage.UsageRecord{}, err
	}
	u.Rounds, u.ToolCalls = int(rounds), int(toolCalls)
	u.Started, u.Finished, u.RecordedAt = fromMicros(started), fromMicros(finished), fromMicros(recorded)
	return u, nil
}

var (
	_ storage.UsageReports  = (*Store)(nil)
	_ storage.LoggedSettler = (*Store)(nil)
)

// usageDay is the UTC day number (days since 1970-01-01) of finished_at.
// Both databases truncate integer division towards zero, so times before
// the epoch (the zero time.Time among them) are rounded down by hand.
const usageDay = `CASE WHEN u.finished_at >= 0 THEN u.finished_at / 86400000000
	ELSE (u.finished_at + 1) / 86400000000 - 1 END`

// usageTotals are the aggregates of a summary row, in UsageRow order. The
// casts keep PostgreSQL from widening the sums to NUMERIC.
const usageTotals = `COUNT(*),
	CAST(SUM(u.prompt_tokens) AS BIGINT),
	CAST(SUM(u.completion_tokens) AS BIGINT),
	CAST(SUM(u.cost_cents) AS BIGINT),
	CAST(SUM(CASE WHEN u.estimated THEN 1 ELSE 0 END) AS BIGINT)`

// UsageSummary totals the account's usage records that finished in
// [q.Since, q.Until) with one GROUP BY query, grouped as q.By says.
func (s *Store) UsageSummary(ctx context.Context, accountID string, q storage.UsageQuery) ([]storage.UsageRow, error) {
	var query string
	switch q.By {
	case storage.UsageByDay:
		query = `SELECT ` + usageDay + `, '', ` + usageTotals + `
			FROM usage_records u WHERE ` + usageWindow + `
			GROUP BY ` + usageDay + ` ORDER BY ` + usageDay
	case storage.UsageByKey:
		query = `SELECT u.key_id, COALESCE(k.hint, ''), ` + usageTotals + `
			FROM usage_records u LEFT JOIN api_keys k ON k.id = u.key_id WHERE ` + usageWindow + `
			GROUP BY u.key_id, k.hint ORDER BY SUM(u.cost_cents) DESC, u.key_id`
	case storage.UsageByEndUser:
		query = `SELECT u.end_user, '', ` + usageTotals + `
			FROM usage_records u WHERE ` + usageWindow + `
			GROUP BY u.end_user ORDER BY SUM(u.cost_cents) DESC, u.end_user`
	case storage.UsageByModel:
		query = `SELECT u.model, '', ` + usageTotals + `
			FROM usage_records u WHERE ` + usageWindow + `
			GROUP BY u.model ORDER BY SUM(u.cost_cents) DESC, u.model`
	default:
		return nil, fmt.Errorf("storage: unknown usage grouping %q", q.By)
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.Since.IsZero() {
		since = micros(q.Since)
	}
	if !q.Until.IsZero() {
		until = micros(q.Until)
	}
	rows, err := s.db.Query(ctx, query, accountID, since, until)
	if err != nil {
		return nil, wrap(err, "summarising usage")
	}
	defer rows.Close()
	var out []storage.UsageRow
	for rows.Next() {
		var r storage.UsageRow
		var day int64
		group := any(&r.Group)
		if q.By == storage.UsageByDay {
			group = &day
		}
		if err := rows.Scan(group, &r.KeyHint, &r.Requests, &r.PromptTokens, &r.CompletionTokens,
			&r.CostCents, &r.EstimatedRequests); err != nil {
			return nil, wrap(err, "summarising usage")
		}
		if q.By == storage.UsageByDay {
			r.Group = time.Unix(day*24*60*60, 0).UTC().Format(time.DateOnly)
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err(), "summarising usage")
}

// usageWindow selects the account's records ($1) that finished in
// [$2, $3), which the (account_id, finished_at) index serves.
const usageWindow = `u.account_id = $1 AND u.finished_at >= $2 AND u.finished_at < $3`

// Charges lists the account's newest charges first; limit <= 0 lists all.
func (s *Store) Charges(ctx context.Context, accountID string, limit int) ([]storage.LedgerEntry, error) {
	query := `SELECT ` + entryColumns + ` FROM ledger_entries WHERE account_id = $1 AND kind = $2 ORDER BY seq DESC` + limitClause(limit)
	entries, err := queryAll(ctx, s.db, scanEntry, query, accountID, string(storage.EntryCharge))
	return entries, wrap(err, "listing charges")
}
