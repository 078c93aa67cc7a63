package limits

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// releaseGather is how long a release waits for company before it is sent
// on its own. Releases come in bursts (a ledger commit settles the holds
// of all its charges at once) and are followed by admissions: gathered,
// a commit of twenty charges frees their holds with one round trip
// instead of twenty, and a stream's end costs no round trip of its own
// when the node admits anything within the gather time. Other nodes see
// the slot or the money free that much later; this node's admissions see
// it at once (Redis.runAdmit). At 2ms every release of a node admitting
// 500 requests a second or more rides an admission: a stream's release
// comes as its handlers return, often just after the client's next
// request was admitted, so it waits for the one after that (at 500 µs,
// 40% of the releases of /v1 streams sent one at a time went alone).
const releaseGather = 2 * time.Millisecond

// maxReleasePipeline bounds the releases of one pipeline.
const maxReleasePipeline = 256

// settlement is one hold to free, with the charge to take off the
// mirrored balance.
type settlement struct {
	balanceKey, holdsKey, heldKey, member string
	charge                                int64
}

// keys are the settle script's.
func (s settlement) keys() []string { return []string{s.balanceKey, s.holdsKey, s.heldKey} }

// release frees what an admission took: its stream slot, its hold, or
// both.
type release struct {
	leaseKey, leaseID string      // the slot; leaseKey is empty for none
	hold              *settlement // nil for none
	queued            time.Time   // when it was added to the queue
}

// releases gathers this node's releases and sends them in one pipeline
// with whichever comes first: the node's next admission, ahead of its
// script in the same round trip, or a goroutine once the oldest of them
// has waited the gather time. Every release gets the whole gather time
// from its own arrival: a goroutine that woke the gather time after the
// first release of its round would send a later one that had waited only
// a fraction of it, just before the admission it would have ridden.
// Releases that arrive while a pipeline is in flight go in the next.
type releases struct {
	r       *Redis
	gather  time.Duration
	mu      sync.Mutex
	queue   []release
	sending bool // a goroutine is gathering or sending
	unsent  sync.WaitGroup
}

// add queues rel to be sent within the gather time plus the round trips
// queued before it.
func (q *releases) add(rel release) {
	q.unsent.Add(1)
	rel.queued = time.Now()
	q.mu.Lock()
	q.queue = append(q.queue, rel)
	start := !q.sending
	q.sending = true
	q.mu.Unlock()
	if start {
		guard.Go(redisReleaseGoroutine, q.send)
	}
}

// take removes and returns up to maxReleasePipeline queued releases, the
// oldest first; their sender passes them to Redis.released once their
// pipeline is done.
func (q *releases) take() []release {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeLocked()
}

func (q *releases) takeLocked() []release {
	batch := q.queue[:min(len(q.queue), maxReleasePipeline)]
	q.queue = q.queue[len(batch):]
	if len(q.queue) == 0 {
		q.queue = nil
	}
	return batch
}

// due is what the gathering goroutine does at now: send the queued
// releases (up to a pipeline's worth) once the oldest has waited the
// gather time, or else wait the rest of that time. With nothing queued
// it marks the goroutine gone, under the same lock that add checks it,
// and returns neither.
func (q *releases) due(now time.Time) (batch []release, wait time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.sending = false
		return nil, 0
	}
	if left := q.queue[0].queued.Add(q.gather).Sub(now); left > 0 {
		return nil, left
	}
	return q.takeLocked(), 0
}

func (q *releases) send() {
	for wait := q.gather; ; {
		time.Sleep(wait)
		batch, next := q.due(time.Now())
		switch {
		case len(batch) > 0:
			// The goroutine must go on: add starts no other while it
			// is marked sending.
			_ = guard.Run(redisReleaseGoroutine, func() { q.r.sendReleases(batch) })
			wait = 0
		case next == 0:
			return
		default:
			wait = next
		}
	}
}

// Flush returns once the releases gathered so far have been sent to Redis
// (or failed), so that a node shutting down after its ledger writer
// committed sends every one of them.
func (r *Redis) Flush() { r.releases.unsent.Wait() }

// sendReleases sends batch in one round trip. When Redis does not answer,
// each slot and hold expires within LeaseTTL and each mirror, which then
// lacks the charge, within BalanceTTL.
//
// The batch is finished (Redis.released) exactly once, whatever happens:
// a batch left unfinished would keep Flush, and so a graceful stop,
// waiting for ever.
func (r *Redis) sendReleases(batch []release) {
	var finished atomic.Bool
	finish := func(settles []*redis.Cmd) bool {
		return finished.CompareAndSwap(false, true) && r.released(batch, settles)
	}
	err := r.call(context.Background(), "release", func(ctx context.Context) error {
		// Should anything panic before the batch is finished, it is
		// finished as unsent: the slots and holds expire within
		// LeaseTTL. Here rather than after call returns, which it may
		// have done at its timeout.
		defer finish(nil)
		pipe := r.client.Pipeline()
		settles := queueReleases(ctx, pipe, batch)
		_, err := pipe.Exec(ctx)
		if finish(settles) && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return nil // only a settle script Redis did not know
		}
		return err
	})
	if err == errBreakerOpen {
		finish(nil) // never sent
	}
}

// queueReleases adds the commands of batch to pipe and returns, for each
// release, its settle command or nil.
func queueReleases(ctx context.Context, pipe redis.Pipeliner, batch []release) []*redis.Cmd {
	settles := make([]*redis.Cmd, len(batch))
	for i, rel := range batch {
		if s := rel.hold; s != nil {
			settles[i] = pipe.EvalSha(ctx, settleScript.Hash(), s.keys(), s.member, s.charge)
		}
		if rel.leaseKey != "" {
			pipe.ZRem(ctx, rel.leaseKey, rel.leaseID)
		}
	}
	return settles
}

// released finishes the releases of batch once their pipeline returned
// (settles nil: it was never sent). A settlement Redis refused for want
// of the script (it restarted) is sent again on its own, which loads it;
// one that failed otherwise is logged. It reports whether every failure
// was for want of the script.
func (r *Redis) released(batch []release, settles []*redis.Cmd) (onlyNoScript bool) {
	defer r.releases.unsent.Add(-len(batch))
	onlyNoScript = true
	for i, rel := range batch {
		if settles == nil || settles[i] == nil {
			continue
		}
		switch err := settles[i].Err(); {
		case err == nil:
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			r.settleHold(*rel.hold)
		default:
			onlyNoScript = false
			if rel.hold.charge > 0 {
				r.log.Warn("redis limiter could not lower a mirrored balance by a charge",
					zap.String("hold", rel.hold.member), zap.Error(err))
			}
		}
	}
	return onlyNoScript
}

// settleHold frees the hold and lowers the mirrored balance by its
// charge, in a round trip of its own. When Redis does not answer, the
// hold expires within LeaseTTL and the mirror, which then lacks the
// charge, within BalanceTTL.
func (r *Redis) settleHold(s settlement) {
	err := r.call(context.Background(), "settle", func(ctx context.Context) error {
		return settleScript.Run(ctx, r.client, s.keys(), s.member, s.charge).Err()
	})
	if err != nil && s.charge > 0 {
		r.log.Warn("redis limiter could not lower a mirrored balance by a charge",
			zap.String("hold", s.member), zap.Error(err))
	}
}
