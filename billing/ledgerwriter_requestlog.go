package billing

import (
	"context"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// The request log rides on the ledger writer: a request hands its entry
// to Log, which only appends it to a slice, and the writer appends every
// entry queued with each batch of charges, so that the log costs the
// client's path no write and the database no transaction of its own: the
// entries go in the charges' transaction, after them, where the store
// can (storage.LoggedSettler), else in one transaction after it. Charges
// come first: an entry never keeps one from committing, and a failed
// append loses entries, never money.

// DefaultRequestLogRetention is how long entries are kept unless
// configured otherwise.
const DefaultRequestLogRetention = 30 * 24 * time.Hour

// requestLogSweepEvery is how often the writer deletes expired entries;
// pruneChunk bounds one DELETE, so that a sweep after a long pause does
// not hold the database for one long statement.
const (
	requestLogSweepEvery = time.Hour
	pruneChunk           = 5000
)

// requestLogQueue holds the entries waiting for the writer, under the
// writer's mutex.
type requestLogQueue struct {
	store     storage.RequestLog
	queued    []storage.RequestLogEntry
	retention atomic.Int64 // time.Duration; <= 0 keeps entries forever
	dropped   atomic.Int64
	now       func() time.Time
	stop      chan struct{}
}

var requestLogGoroutine = guard.Name("request_log_sweep")

// Log queues e for the request log and returns at once. When as many
// entries wait as charges may (WriterConfig.QueueSize), e is dropped and
// counted (DroppedLogEntries): a log that falls behind must not slow
// requests down. After Close, e is appended at once.
func (w *LedgerWriter) Log(e storage.RequestLogEntry) {
	q := &w.requestLog
	if q.store == nil {
		return
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.appendLogs([]storage.RequestLogEntry{e})
		return
	}
	if len(q.queued) >= w.queueSize {
		w.mu.Unlock()
		q.dropped.Add(1)
		return
	}
	q.queued = append(q.queued, e)
	n := len(w.queued) + len(q.queued)
	w.mu.Unlock()
	if n == 1 {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// DroppedLogEntries is how many request log entries were lost: dropped
// from a full queue or refused by the store.
func (w *LedgerWriter) DroppedLogEntries() int64 { return w.requestLog.dropped.Load() }

// takeLogs takes every entry queued, and gives the queue the array of
// an earlier batch's entries (recycleLogs) to append to, so that Log
// does not grow a new one from nothing for every batch. The writer
// goroutine alone calls it.
func (w *LedgerWriter) takeLogs() []storage.RequestLogEntry {
	spare := w.spareLogs
	w.spareLogs = nil
	w.mu.Lock()
	defer w.mu.Unlock()
	logs := w.requestLog.queued
	w.requestLog.queued = spare
	return logs
}

// maxSpareLogs bounds the array recycleLogs keeps: a backlog's would be
// scanned by every garbage collection.
const maxSpareLogs = 1024

// recycleLogs keeps the array of logs, which takeLogs took and the store
// is done with, for the next batch's entries. The writer goroutine alone
// calls it.
func (w *LedgerWriter) recycleLogs(logs []storage.RequestLogEntry) {
	if cap(logs) == 0 || cap(logs) > maxSpareLogs {
		return
	}
	clear(logs) // the entries' strings are not the writer's to keep
	w.spareLogs = logs[:0]
}

// loggedSettler is cfg.Store as a storage.LoggedSettler when it is the
// request log as well; nil otherwise, and then the entries go to
// cfg.RequestLog on their own.
func loggedSettler(cfg WriterConfig) storage.LoggedSettler {
	ls, ok := cfg.Store.(storage.LoggedSettler)
	if !ok || cfg.RequestLog == nil {
		return nil
	}
	store, log := any(cfg.Store), any(cfg.RequestLog)
	// Comparing values of a type that is not comparable would panic.
	if !reflect.TypeOf(store).Comparable() || store != log {
		return nil
	}
	return ls
}

// appendLogs stores logs in one transaction; on failure they are
// counted as dropped and logged, not retried: the charges they describe
// are in the ledger either way.
func (w *LedgerWriter) appendLogs(logs []storage.RequestLogEntry) {
	if len(logs) == 0 || w.requestLog.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(unhurried, attemptTimeout)
	defer cancel()
	var err error
	if perr := guard.Run(writerGoroutine, func() { err = w.requestLog.store.AppendRequestLog(ctx, logs) }); perr != nil {
		err = perr
	}
	if err != nil {
		w.requestLog.dropped.Add(int64(len(logs)))
		w.log.Warn("request log: entries lost", slog.Int("entries", len(logs)), slog.Any("error", err))
	}
}

// SetRequestLogRetention sets how long request log entries are kept,
// from the next sweep on; zero or less keeps them forever.
func (w *LedgerWriter) SetRequestLogRetention(d time.Duration) {
	w.requestLog.retention.Store(int64(d))
}

// SweepRequestLog deletes the entries older than the retention, in
// chunks, and returns how many it deleted. The writer runs it every
// hour; every node does, which costs a few empty DELETEs.
func (w *LedgerWriter) SweepRequestLog(ctx context.Context) (int64, error) {
	q := &w.requestLog
	keep := time.Duration(q.retention.Load())
	if q.store == nil || keep <= 0 {
		return 0, nil
	}
	cut := q.now().Add(-keep)
	var total int64
	for {
		n, err := q.store.PruneRequestLog(ctx, cut, pruneChunk)
		total += n
		if err != nil || n < pruneChunk {
			return total, err
		}
	}
}

// sweepRequestLog runs SweepRequestLog every requestLogSweepEvery, the
// first an interval after the start, until the writer closes.
func (w *LedgerWriter) sweepRequestLog() {
	t := time.NewTicker(requestLogSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-w.requestLog.stop:
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		n, err := w.SweepRequestLog(ctx)
		cancel()
		if err != nil {
			w.log.Warn("request log: sweeping expired entries", slog.Any("error", err))
		} else if n > 0 {
			w.log.Info("request log: expired entries deleted", slog.Int64("entries", n))
		}
	}
}
