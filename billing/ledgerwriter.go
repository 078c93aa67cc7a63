package billing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// Defaults of WriterConfig.
const (
	// DefaultMaxDelay is long enough for a loaded node to settle about a
	// hundred charges per transaction, where SQLite spends much of a
	// commit's cost (one write call per page it changed) whatever its
	// size: a charge committed alone costs about 4 times the CPU of one
	// in a batch of 8, 7 times that of one in a batch of 32 and 11 times
	// that of one in a batch of 128 (BenchmarkSettleUsageBatch in
	// storage/sqlite). From 10ms to 25ms, a node at concurrency 32 spent
	// about 8% less CPU per request; the price is a durability window of
	// 25ms instead of 10ms (docs/billing.md).
	DefaultMaxDelay  = 25 * time.Millisecond
	DefaultMaxBatch  = 256
	DefaultQueueSize = 4096
	// DefaultRetryFor bounds how long a batch the database refused as a
	// whole is retried.
	DefaultRetryFor = 10 * time.Second
)

// attemptTimeout bounds one transaction of the writer.
const attemptTimeout = 10 * time.Second

// unhurried is the context of the writer's transactions, before their
// timeout: made once rather than for every batch.
var unhurried = storage.Unhurried(context.Background())

// WriterConfig tunes a LedgerWriter.
type WriterConfig struct {
	// Store settles the batches. Required.
	Store storage.Usage
	// MaxDelay is how long the writer waits for more records after the
	// first of a batch before it commits. Zero, the zero value, commits
	// at once whatever is queued; records that arrive during a commit
	// still form the next batch. Negative means DefaultMaxDelay, which is
	// what the gateway uses unless configured otherwise.
	MaxDelay time.Duration
	// MaxBatch is the most records one transaction settles. Default:
	// DefaultMaxBatch.
	MaxBatch int
	// QueueSize is how many records may wait for the writer; past it
	// Enqueue blocks until the writer catches up. Default:
	// DefaultQueueSize.
	QueueSize int
	// RetryFor is how long a batch the database refused as a whole (it
	// was unreachable, say) is retried, with growing pauses, before its
	// records are given up with the error. The time counts from the
	// first of consecutive failures, so a database that stays down costs
	// each later batch one attempt, not another RetryFor. Default:
	// DefaultRetryFor.
	RetryFor time.Duration
	// Logger reports batches that failed. Default: slog.Default().
	Logger *slog.Logger

	// RequestLog keeps the entries given to Log, appended with each
	// batch: in its charges' transaction, after them, where RequestLog
	// is Store and Store is a storage.LoggedSettler; else in a
	// transaction of their own after the charges committed. Nil: Log
	// drops them.
	RequestLog storage.RequestLog
	// RequestLogRetention is how long the writer keeps entries before
	// its hourly sweep deletes them; negative keeps them forever.
	// Default: DefaultRequestLogRetention.
	RequestLogRetention time.Duration
	// Now is the clock of the sweep. Default: time.Now.
	Now func() time.Time
}

// LedgerWriter settles usage records off the path the client waits for,
// in group commits: one goroutine takes the queued records and settles
// up to MaxBatch of them in one transaction (storage.Usage.
// SettleUsageBatch), at most MaxDelay after the first of them was
// queued. Each record's completion runs once its transaction committed
// (or failed for good), which is when a request's hold may be released.
//
// A record is durable only once its completion ran with a nil error. A
// process killed while records wait in the queue or in an uncommitted
// transaction loses them (docs/billing.md, "Durability window"); Close
// commits everything queued.
//
// It is safe for concurrent use.
type LedgerWriter struct {
	store storage.Usage
	// logged is store when it appends the request log as well, in the
	// charges' transaction; nil otherwise.
	logged   storage.LoggedSettler
	maxDelay atomic.Int64 // time.Duration
	maxBatch atomic.Int64
	retryFor time.Duration
	log      *slog.Logger

	// The queue is a slice under a mutex rather than a channel: a
	// channel's buffer is scanned whole by every garbage collection
	// (QueueSize records of pointers, about a megabyte), and a receive
	// per record would wake the writer for every request it then lets
	// wait for the batch's delay. Enqueue wakes it only when the queue
	// stops being empty or fills a batch.
	mu        sync.Mutex
	queued    []pendingRecord // waiting for the writer, in order
	queueSize int
	room      sync.Cond // signalled when the writer takes records, or on Close
	wake      chan struct{}
	closed    bool

	pending atomic.Int64 // records enqueued whose completion has not returned
	closing chan struct{}
	done    chan struct{}  // the writer goroutine ended
	calls   sync.WaitGroup // completions running

	failingSince time.Time // first failure of the current run of failures

	requestLog requestLogQueue
	// spareLogs is the array of a batch's entries, cleared, that takeLogs
	// gives the queue for the next batch's; recs is the array of a
	// batch's records as the store is handed them. Only the writer
	// goroutine uses them. Made anew for each batch, they were a third
	// of the bytes a request allocated on the writer's behalf.
	spareLogs []storage.RequestLogEntry
	recs      []storage.UsageRecord

	commitHooks commitHooks // OnCommit

	// after is time.After; tests stop or step the clock of the batch
	// delay with it.
	after func(time.Duration) <-chan time.Time
}

type pendingRecord struct {
	rec  storage.UsageRecord
	done Completion
}

// NewLedgerWriter starts a writer. Close stops it.
func NewLedgerWriter(cfg WriterConfig) *LedgerWriter {
	return newLedgerWriter(cfg, time.After)
}

func newLedgerWriter(cfg WriterConfig, after func(time.Duration) <-chan time.Time) *LedgerWriter {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.RetryFor <= 0 {
		cfg.RetryFor = DefaultRetryFor
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &LedgerWriter{
		store:     cfg.Store,
		retryFor:  cfg.RetryFor,
		log:       cfg.Logger,
		queueSize: cfg.QueueSize,
		wake:      make(chan struct{}, 1),
		closing:   make(chan struct{}),
		done:      make(chan struct{}),
		after:     after,
	}
	w.requestLog.store = cfg.RequestLog
	w.logged = loggedSettler(cfg)
	w.requestLog.now = cfg.Now
	if w.requestLog.now == nil {
		w.requestLog.now = time.Now
	}
	if cfg.RequestLogRetention == 0 {
		cfg.RequestLogRetention = DefaultRequestLogRetention
	}
	w.SetRequestLogRetention(cfg.RequestLogRetention)
	w.requestLog.stop = make(chan struct{})
	w.room.L = &w.mu
	w.Tune(cfg.MaxDelay, cfg.MaxBatch)
	go w.run()
	if cfg.RequestLog != nil {
		guard.Go(requestLogGoroutine, w.sweepRequestLog)
	}
	return w
}

// Tune changes MaxDelay and MaxBatch, with WriterConfig's defaults for
// values below zero (delay) or one (batch), from the next batch on.
func (w *LedgerWriter) Tune(maxDelay time.Duration, maxBatch int) {
	if maxDelay < 0 {
		maxDelay = DefaultMaxDelay
	}
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	w.maxDelay.Store(int64(maxDelay))
	w.maxBatch.Store(int64(maxBatch))
}

// Enqueue queues rec, whose CostCents is already priced, and returns at
// once unless the queue is full: then it waits for room, so that a
// writer that falls behind slows requests down instead of dropping their
// charges. done is called once, from another goroutine, with the record
// as stored (storage.Usage.SettleUsage) after it was committed, or with
// the error that kept it from being settled. The completions of a batch
// run one after the other on one goroutine: done must not wait on I/O.
//
// After Close the record is settled at once, in a transaction of its
// own, before Enqueue returns.
func (w *LedgerWriter) Enqueue(rec storage.UsageRecord, done func(storage.UsageRecord, error)) {
	w.EnqueueTo(rec, completionFunc(done))
}

// A Completion is told once of the outcome of a record handed to the
// ledger writer (LedgerWriter.EnqueueTo).
type Completion interface {
	Complete(stored storage.UsageRecord, err error)
}

// completionFunc is Enqueue's done as a Completion: a func is a
// pointer's worth, boxed for free.
type completionFunc func(storage.UsageRecord, error)

func (f completionFunc) Complete(stored storage.UsageRecord, err error) { f(stored, err) }

// EnqueueTo is Enqueue with done a Completion, which a caller can keep
// in memory of its own where a closure made for the record would be an
// allocation a charge. done.Complete is called as Enqueue calls done.
func (w *LedgerWriter) EnqueueTo(rec storage.UsageRecord, done Completion) {
	w.pending.Add(1)
	w.mu.Lock()
	for len(w.queued) >= w.queueSize && !w.closed {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		defer w.pending.Add(-1) // even if done panics on this request's goroutine
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		defer cancel()
		stored, err := w.store.SettleUsage(ctx, rec)
		done.Complete(stored, err)
		return
	}
	w.queued = append(w.queued, pendingRecord{rec: rec, done: done})
	n := len(w.queued)
	w.mu.Unlock()
	if n == 1 || n >= int(w.maxBatch.Load()) {
		select {
		case w.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// Pending is the number of records enqueued whose completion has not
// returned yet: queued, in a transaction, or being completed. Once it is
// zero, every record enqueued before is committed (or failed) and its
// hold settled.
func (w *LedgerWriter) Pending() int { return int(w.pending.Load()) }

// Close stops taking records into the queue, commits every record
// queued, waits for their completions and returns. Later Enqueues
// settle on their own. Closing twice is harmless.
func (w *LedgerWriter) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.closing)
		close(w.requestLog.stop)
		w.room.Broadcast()
	}
	w.mu.Unlock()
	<-w.done
	w.calls.Wait()
	return nil
}

// Names of the writer's goroutines, as internal/guard counts their
// panics.
var (
	writerGoroutine      = guard.Name("ledger_writer")
	completionsGoroutine = guard.Name("ledger_completions")
)

// run is the writer goroutine. A panic in it does not end the process
// and does not stop the writer, which would leave every later charge
// unwritten and every later request waiting for room in a full queue:
// the store's own panics are caught in commit, which settles the batch
// another way, a completion's panic ends only that completion, and
// anything else that panics fails the records in hand with the panic
// and starts the loop again.
func (w *LedgerWriter) run() {
	defer close(w.done)
	for !w.guarded(w.serve) {
	}
	for !w.guarded(w.drain) {
	}
}

// restartPause is how long the writer waits before it starts its loop
// again after a panic, so that a panic that comes back every time costs
// a log line per pause rather than a core.
const restartPause = 100 * time.Millisecond

// guarded runs loop and reports whether it returned without panicking.
// After a panic, the records loop had in hand fail with it.
func (w *LedgerWriter) guarded(loop func(inHand *[]pendingRecord)) bool {
	var inHand []pendingRecord
	err := guard.Run(writerGoroutine, func() { loop(&inHand) })
	if err == nil {
		return true
	}
	w.log.Error("ledger writer: a panic failed the records in hand; the writer goes on",
		slog.Int("records", len(inHand)), slog.Any("error", err))
	w.complete(inHand, nil, err)
	time.Sleep(restartPause)
	return false
}

// serve commits batches until the writer is closing. *inHand is the
// batch taken from the queue and not yet handed to its completions.
func (w *LedgerWriter) serve(inHand *[]pendingRecord) {
	var batch []pendingRecord
	for w.waitForRecords() {
		batch = w.collect(batch[:0])
		taken := w.takeLogs()
		logs := taken
		*inHand = batch
		if len(batch) > 0 {
			logs = w.commit(batch, logs)
		}
		*inHand = nil
		clear(batch) // let the records and completions go
		w.appendLogs(logs)
		w.recycleLogs(taken)
	}
}

// queuedCount is the number of records waiting.
func (w *LedgerWriter) queuedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queued)
}

// somethingQueued tells whether a record or a request log entry waits.
func (w *LedgerWriter) somethingQueued() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queued)+len(w.requestLog.queued) > 0
}

// waitForRecords waits until a record or a request log entry is queued
// (true) or the writer is closing (false). Entries do not count towards
// a full batch: they ride along with the charges.
func (w *LedgerWriter) waitForRecords() bool {
	for !w.somethingQueued() {
		select {
		case <-w.wake:
		case <-w.closing:
			return false
		}
	}
	return true
}

// collect takes queued records into batch, up to MaxBatch: at once what
// fills it, else, after MaxDelay has passed or the writer started
// closing, what is queued by then.
func (w *LedgerWriter) collect(batch []pendingRecord) []pendingRecord {
	limit := int(w.maxBatch.Load())
	delay := time.Duration(w.maxDelay.Load())
	if delay > 0 && w.queuedCount() < limit {
		timer := w.after(delay)
	wait:
		for {
			select {
			case <-w.wake:
				if w.queuedCount() >= limit {
					break wait
				}
			case <-timer:
				break wait
			case <-w.closing:
				break wait
			}
		}
	}
	return w.take(batch, limit)
}

// take moves up to limit queued records, the oldest, into batch.
func (w *LedgerWriter) take(batch []pendingRecord, limit int) []pendingRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := min(len(w.queued), limit)
	batch = append(batch, w.queued[:k]...)
	n := copy(w.queued, w.queued[k:])
	clear(w.queued[n:])
	w.queued = w.queued[:n]
	// A backlog's array would stay, and be scanned by every collection.
	if c := cap(w.queued); c > 1024 && n < c/4 {
		w.queued = append(make([]pendingRecord, 0, c/2), w.queued...)
	}
	w.room.Broadcast()
	return batch
}

// drain commits everything left in the queue. No Enqueue can add to it
// any more: Close set closed under the lock that Enqueue holds.
func (w *LedgerWriter) drain(inHand *[]pendingRecord) {
	limit := int(w.maxBatch.Load())
	for {
		batch := w.take(nil, limit)
		taken := w.takeLogs()
		if len(batch) == 0 && len(taken) == 0 {
			return
		}
		logs := taken
		*inHand = batch
		if len(batch) > 0 {
			logs = w.commit(batch, logs)
		}
		*inHand = nil
		w.appendLogs(logs)
		w.recycleLogs(taken)
	}
}

// commit settles batch in one transaction, retrying a transaction that
// failed as a whole, and hands each record's outcome to its completion.
// Where the store can, the request log's entries logs ride in the same
// transaction, after the charges; commit returns those it did not write,
// for a transaction of their own. Entries the store refused are lost and
// counted, not returned.
func (w *LedgerWriter) commit(batch []pendingRecord, logs []storage.RequestLogEntry) (unwritten []storage.RequestLogEntry) {
	recs := w.recs[:0]
	for _, p := range batch {
		recs = append(recs, p.rec)
	}
	w.recs = recs
	// The store does not keep recs, and the completions get the records
	// as settled: the array is the next batch's, its strings nobody's.
	defer clear(recs)
	riding := logs
	if w.logged == nil {
		riding = nil
	}
	var settled []storage.Settlement
	var logErr, err error
	for attempt := 0; ; attempt++ {
		settled, logErr, err = w.settleBatch(recs, riding)
		if guard.IsPanic(err) {
			// A panic is no outage that passes: the same batch would
			// meet it again. Settled one by one, only a record the store
			// cannot settle fails, and a record that was committed
			// before the panic is found by its charge id, not charged
			// twice.
			w.log.Error("settling usage: the batch's transaction panicked; settling its records one by one",
				slog.Int("records", len(recs)), slog.Any("error", err))
			settled, err, riding = w.settleEach(recs), nil, nil
			break
		}
		if err == nil {
			w.failingSince = time.Time{}
			break
		}
		now := time.Now()
		if w.failingSince.IsZero() {
			w.failingSince = now
		}
		if now.Sub(w.failingSince) >= w.retryFor {
			w.log.Error("settling usage: batch given up", slog.Int("records", len(recs)), slog.Any("error", err))
			break
		}
		w.log.Warn("settling usage: batch failed, retrying", slog.Int("records", len(recs)),
			slog.Int("attempt", attempt+1), slog.Any("error", err))
		time.Sleep(min(10*time.Millisecond<<min(attempt, 7), time.Second, w.retryFor-now.Sub(w.failingSince)))
	}
	if err == nil {
		w.committed(settled)
	}
	w.complete(batch, settled, err)
	if err != nil || len(riding) == 0 {
		return logs
	}
	if logErr != nil {
		w.requestLog.dropped.Add(int64(len(riding)))
		w.log.Warn("request log: entries lost", slog.Int("entries", len(riding)), slog.Any("error", logErr))
	}
	return nil
}

// settleBatch settles recs in one transaction, with the request log's
// entries logs when there are any (then w.logged is set), a panic in the
// store being returned as its error. logErr is why the store refused the
// entries alone.
func (w *LedgerWriter) settleBatch(recs []storage.UsageRecord, logs []storage.RequestLogEntry) (settled []storage.Settlement, logErr, err error) {
	ctx, cancel := context.WithTimeout(unhurried, attemptTimeout)
	defer cancel()
	settle := func() { settled, err = w.store.SettleUsageBatch(ctx, recs) }
	if len(logs) > 0 {
		settle = func() { settled, logErr, err = w.logged.SettleUsageBatchLogged(ctx, recs, logs) }
	}
	if perr := guard.Run(writerGoroutine, settle); perr != nil {
		return nil, nil, perr
	}
	if err == nil && len(settled) != len(recs) {
		// The completions index the answer by record.
		return nil, nil, fmt.Errorf("billing: the store settled %d records of a batch of %d", len(settled), len(recs))
	}
	return settled, logErr, err
}

// settleEach settles recs one transaction each, a panic in the store
// being the error of the record that caused it.
func (w *LedgerWriter) settleEach(recs []storage.UsageRecord) []storage.Settlement {
	out := make([]storage.Settlement, len(recs))
	for i, rec := range recs {
		ctx, cancel := context.WithTimeout(unhurried, attemptTimeout)
		if perr := guard.Run(writerGoroutine, func() { out[i].Record, out[i].Err = w.store.SettleUsage(ctx, rec) }); perr != nil {
			out[i] = storage.Settlement{Err: perr}
		}
		cancel()
	}
	return out
}

// complete hands each record of batch its outcome: its settlement, or
// err, the batch's, when that is set. The completions free holds: not
// on the writer's goroutine, so that they do not hold up the next batch,
// but on one of their own for the whole batch, not one each. Freeing a
// hold sends nothing to Redis by itself (the releases are gathered). A
// completion that panics is logged and counted, and the rest of the
// batch still completes.
func (w *LedgerWriter) complete(batch []pendingRecord, settled []storage.Settlement, err error) {
	if len(batch) == 0 {
		return
	}
	// The goroutine reads the records from settled, which the store made
	// for this batch and nothing changes any more, rather than from a copy
	// of it: only the completions are the batch's own.
	dones := make([]Completion, len(batch))
	for i, p := range batch {
		dones[i] = p.done
	}
	w.calls.Add(1)
	go func() {
		defer w.calls.Done()
		for i, done := range dones {
			var rec storage.UsageRecord
			cerr := err
			if err == nil {
				rec, cerr = settled[i].Record, settled[i].Err
			}
			_ = guard.Run(completionsGoroutine, func() { done.Complete(rec, cerr) })
			w.pending.Add(-1)
		}
	}()
}
