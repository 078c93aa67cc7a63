package billing

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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
	store    storage.Usage
	maxDelay atomic.Int64 // time.Duration
	maxBatch atomic.Int64
	retryFor time.Duration
	log      *slog.Logger

	queue   chan pendingRecord
	pending atomic.Int64 // records enqueued whose completion has not returned

	mu      sync.RWMutex // held for reading while sending to queue
	closed  bool
	closing chan struct{}
	done    chan struct{}  // the writer goroutine ended
	calls   sync.WaitGroup // completions running

	failingSince time.Time // first failure of the current run of failures

	// after is time.After; tests stop or step the clock of the batch
	// delay with it.
	after func(time.Duration) <-chan time.Time
}

type pendingRecord struct {
	rec  storage.UsageRecord
	done func(storage.UsageRecord, error)
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
		store:    cfg.Store,
		retryFor: cfg.RetryFor,
		log:      cfg.Logger,
		queue:    make(chan pendingRecord, cfg.QueueSize),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
		after:    after,
	}
	w.Tune(cfg.MaxDelay, cfg.MaxBatch)
	go w.run()
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
// the error that kept it from being settled.
//
// After Close the record is settled at once, in a transaction of its
// own, before Enqueue returns.
func (w *LedgerWriter) Enqueue(rec storage.UsageRecord, done func(storage.UsageRecord, error)) {
	w.pending.Add(1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		defer cancel()
		stored, err := w.store.SettleUsage(ctx, rec)
		done(stored, err)
		w.pending.Add(-1)
		return
	}
	w.queue <- pendingRecord{rec: rec, done: done}
	w.mu.RUnlock()
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
	}
	w.mu.Unlock()
	<-w.done
	w.calls.Wait()
	return nil
}

// run is the writer goroutine.
func (w *LedgerWriter) run() {
	defer close(w.done)
	var batch []pendingRecord
	for {
		var first pendingRecord
		select {
		case first = <-w.queue:
		case <-w.closing:
			w.drain()
			return
		}
		batch = w.collect(append(batch[:0], first))
		w.commit(batch)
		clear(batch) // let the records and completions go
	}
}

// collect adds queued records to batch until it holds MaxBatch, MaxDelay
// has passed, or the writer is closing.
func (w *LedgerWriter) collect(batch []pendingRecord) []pendingRecord {
	limit := int(w.maxBatch.Load())
	// What is queued already needs no waiting.
	for len(batch) < limit {
		select {
		case p := <-w.queue:
			batch = append(batch, p)
			continue
		default:
		}
		break
	}
	delay := time.Duration(w.maxDelay.Load())
	if len(batch) >= limit || delay <= 0 {
		return batch
	}
	timer := w.after(delay)
	for len(batch) < limit {
		select {
		case p := <-w.queue:
			batch = append(batch, p)
		case <-timer:
			return batch
		case <-w.closing:
			return batch
		}
	}
	return batch
}

// drain commits everything left in the queue. No Enqueue can add to it
// any more: Close set closed under the lock that senders hold.
func (w *LedgerWriter) drain() {
	limit := int(w.maxBatch.Load())
	var batch []pendingRecord
	for {
		select {
		case p := <-w.queue:
			batch = append(batch, p)
			if len(batch) < limit {
				continue
			}
		default:
		}
		if len(batch) == 0 {
			return
		}
		w.commit(batch)
		batch = batch[:0]
	}
}

// commit settles batch in one transaction, retrying a transaction that
// failed as a whole, and hands each record's outcome to its completion.
func (w *LedgerWriter) commit(batch []pendingRecord) {
	recs := make([]storage.UsageRecord, len(batch))
	for i, p := range batch {
		recs[i] = p.rec
	}
	var settled []storage.Settlement
	var err error
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		settled, err = w.store.SettleUsageBatch(ctx, recs)
		cancel()
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
	for i, p := range batch {
		var rec storage.UsageRecord
		recErr := err
		if err == nil {
			rec, recErr = settled[i].Record, settled[i].Err
		}
		w.calls.Add(1)
		// Completions free holds, which may be a round trip to Redis
		// each: they must not hold up the next batch, nor each other.
		go func() {
			defer w.calls.Done()
			p.done(rec, recErr)
			w.pending.Add(-1)
		}()
	}
}
