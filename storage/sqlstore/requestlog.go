package sqlstore

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

const requestLogColumns = `id, account_id, key_id, at, request_id, charge_id, end_user, route, method, path,
	model_asked, model_served, upstream, stream, status, error_code, prompt_tokens, completion_tokens,
	cost_cents, estimated, tool_calls, latency_us, first_byte_us`

const requestLogColumnCount = 23

// requestLogCopyColumns names requestLogColumns for COPY.
var requestLogCopyColumns = splitColumns(requestLogColumns)

// AppendRequestLog stores entries in one transaction, as a settlement
// batch writes its records (appendRows).
func (s *Store) AppendRequestLog(ctx context.Context, entries []storage.RequestLogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	args := requestLogArgs(entries)
	defer putArgs(args)
	return wrap(s.appendRequestLog(ctx, *args), "appending to the request log")
}

// appendRequestLog appends the rows of args, from requestLogArgs, in a
// transaction of their own.
func (s *Store) appendRequestLog(ctx context.Context, args []any) error {
	return inTx(ctx, s.db, func(tx Tx) error { return s.appendLogRows(ctx, tx, args) })
}

// requestLogArgs are the values of entries' rows, requestLogColumns
// each, every entry given its id, in a slice of argsPool (putArgs).
func requestLogArgs(entries []storage.RequestLogEntry) *[]any {
	args := takeArgs(len(entries) * requestLogColumnCount)
	// Accounts and keys apart from the words of the API, so that a batch
	// of a few accounts does not push its route or model out, or the
	// other way round.
	var ids, words sharedArgs
	// The entries' ids are slices of one string: one allocation for the
	// batch rather than one an entry.
	const idLen = len(requestLogIDPrefix) + timeIDChars
	buf := takeText()
	defer putText(buf)
	var random randomBase62 // one read of crypto/rand for many ids
	for _, e := range entries {
		*buf = random.appendTimeID(*buf, requestLogIDPrefix, micros(e.At))
	}
	entryIDs := string(*buf)
	for i, e := range entries {
		at := micros(e.At)
		asked, served := words.string(e.ModelAsked), any(nil)
		if e.ModelServed == e.ModelAsked {
			served = asked
		} else {
			served = words.string(e.ModelServed)
		}
		*args = append(*args, entryIDs[i*idLen:(i+1)*idLen], ids.string(e.AccountID), ids.string(e.KeyID), at,
			e.RequestID, e.ChargeID, e.EndUser, words.string(e.Route), words.string(e.Method), words.string(e.Path),
			asked, served, e.Upstream, e.Stream, int64(e.Status),
			e.ErrorCode, e.PromptTokens, e.CompletionTokens, e.CostCents, e.Estimated, int64(e.ToolCalls),
			e.Latency.Microseconds(), e.FirstByte.Microseconds())
	}
	return args
}

// appendLogRows inserts the rows of args, from requestLogArgs, in tx.
func (s *Store) appendLogRows(ctx context.Context, tx Tx, args []any) error {
	return appendRows(ctx, tx, "request_log", requestLogCopyColumns, s.dialect.PositionalParams, args)
}

// RequestLogPage lists the account's entries q selects, newest first,
// walking the (account_id, id) index from the cursor down.
func (s *Store) RequestLogPage(ctx context.Context, accountID string, q storage.RequestLogQuery) ([]storage.RequestLogEntry, error) {
	var where strings.Builder
	args := []any{accountID}
	where.WriteString(`account_id = $1`)
	and := func(cond string, v any) {
		args = append(args, v)
		where.WriteString(" AND ")
		where.WriteString(strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args))))
	}
	if q.KeyID != "" {
		and(`key_id = $?`, q.KeyID)
	}
	if q.EndUser != "" {
		and(`end_user = $?`, q.EndUser)
	}
	if q.Model != "" {
		// Each placeholder is bound once: the value goes in twice.
		args = append(args, q.Model)
		and(`(model_asked = $`+strconv.Itoa(len(args))+` OR model_served = $?)`, q.Model)
	}
	if q.Status != 0 {
		and(`status = $?`, int64(q.Status))
	}
	if q.StatusClass != 0 {
		and(`status >= $?`, int64(q.StatusClass*100))
		and(`status < $?`, int64(q.StatusClass*100+100))
	}
	if !q.Since.IsZero() {
		and(`at >= $?`, micros(q.Since))
	}
	if !q.Until.IsZero() {
		and(`at < $?`, micros(q.Until))
	}
	if q.Before != "" {
		and(`id < $?`, q.Before)
	}
	query := `SELECT ` + requestLogColumns + ` FROM request_log WHERE ` + where.String() +
		` ORDER BY id DESC` + limitClause(q.Limit)
	entries, err := queryAll(ctx, s.db, scanRequestLog, query, args...)
	return entries, wrap(err, "listing the request log")
}

// PruneRequestLog deletes entries older than before, at most limit of
// them: account by account, in the order of their ids, and within an
// account the oldest first.
//
// It finds them through the index by account and id, the one index of
// the table besides its rows, so that no B-tree keyed by time or id
// alone is written for every entry just for the sweep: an id starts with
// At (newTimeID), so an account's entries before before are one range of
// the index, or two where before is after the epoch, since earlier times
// (the zero time among them) come out as hex from 8 to f and sort last.
// at < before is checked all the same, so that only entries older than
// before go. The accounts are read from the same index, a seek each.
//
// A call that stops at its limit keeps the account it stopped in, and
// the next call with a limit and the same before starts there: the sweep
// prunes in chunks until a chunk comes back short, and would otherwise
// walk again through every account already pruned, for each chunk. A
// call without a limit starts from the first account.
func (s *Store) PruneRequestLog(ctx context.Context, before time.Time, limit int) (int64, error) {
	cut := micros(before)
	// The older range first: the times before the epoch (to "g", past
	// every hex digit), then those from it on.
	ranges := [][2]string{{requestLogIDFrom(math.MinInt64), requestLogIDPrefix + "g"}}
	if cut < 0 {
		ranges[0][1] = requestLogIDFrom(cut)
	} else if cut > 0 {
		ranges = append(ranges, [2]string{requestLogIDPrefix, requestLogIDFrom(cut)})
	}
	// The first account is the one at or after account, the others
	// those after the one before.
	account, inclusive := "", true
	if limit > 0 {
		account = s.pruneFrom(cut)
	}
	var total int64
	for {
		next := `SELECT account_id FROM request_log WHERE account_id > $1 ORDER BY account_id LIMIT 1`
		if inclusive {
			next = `SELECT account_id FROM request_log WHERE account_id >= $1 ORDER BY account_id LIMIT 1`
		}
		err := s.db.QueryRow(ctx, next, account).Scan(&account)
		if noRows(err) {
			s.prunedUpTo(cut, "")
			return total, nil
		}
		if err != nil {
			return total, wrap(err, "pruning the request log")
		}
		inclusive = false
		for _, r := range ranges {
			query := `DELETE FROM request_log WHERE account_id = $1 AND id >= $2 AND id < $3 AND at < $4`
			args := []any{account, r[0], r[1], cut}
			if limit > 0 {
				query = `DELETE FROM request_log WHERE account_id = $1 AND id IN (SELECT id FROM request_log
					WHERE account_id = $2 AND id >= $3 AND id < $4 AND at < $5 ORDER BY id` + limitClause(limit-int(total)) + `)`
				args = []any{account, account, r[0], r[1], cut}
			}
			n, err := s.db.Exec(ctx, query, args...)
			total += n
			if err != nil {
				return total, wrap(err, "pruning the request log")
			}
			if limit > 0 && total >= int64(limit) {
				// The account may have more: the next call starts in it.
				s.prunedUpTo(cut, account)
				return total, nil
			}
		}
	}
}

// pruneCursor is the account the last PruneRequestLog that reached its
// limit stopped in, for the next call with the same cut.
type pruneCursor struct {
	mu      sync.Mutex
	cut     int64
	account string
}

// pruneFrom is the account a prune to cut starts at: the one the last
// prune to the same cut stopped in, else "", before every account.
func (s *Store) pruneFrom(cut int64) string {
	c := &s.pruned
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut != cut {
		return ""
	}
	return c.account
}

// prunedUpTo keeps the account a prune to cut stopped in; "" once it went
// through them all.
func (s *Store) prunedUpTo(cut int64, account string) {
	c := &s.pruned
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut, c.account = cut, account
}

// requestLogIDPrefix starts the id of every request log entry.
const requestLogIDPrefix = "rq_"

// requestLogIDFrom is the least id of an entry at the time at
// (microseconds): the ids of the entries at at and later times sort
// after it, up to the times before the epoch.
func requestLogIDFrom(at int64) string {
	id := newTimeID(requestLogIDPrefix, at)
	return id[:len(requestLogIDPrefix)+16]
}

func scanRequestLog(r Row) (storage.RequestLogEntry, error) {
	var e storage.RequestLogEntry
	var at, status, toolCalls, latency, firstByte int64
	err := r.Scan(&e.ID, &e.AccountID, &e.KeyID, &at, &e.RequestID, &e.ChargeID, &e.EndUser, &e.Route, &e.Method,
		&e.Path, &e.ModelAsked, &e.ModelServed, &e.Upstream, &e.Stream, &status, &e.ErrorCode, &e.PromptTokens,
		&e.CompletionTokens, &e.CostCents, &e.Estimated, &toolCalls, &latency, &firstByte)
	if err != nil {
		return storage.RequestLogEntry{}, err
	}
	e.At = fromMicros(at)
	e.Status, e.ToolCalls = int(status), int(toolCalls)
	e.Latency, e.FirstByte = time.Duration(latency)*time.Microsecond, time.Duration(firstByte)*time.Microsecond
	return e, nil
}
