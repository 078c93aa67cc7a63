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
	balanceKey, holdsKey, member string
	charge                       int64
	// byID: member is the id of an admission whose answer was lost, so
	// the amount it held is not known; its hold is dropped whatever it
	// is (dropHoldScript), and no charge goes with it.
	byID bool
	// again: an earlier try may have run and only its answer been lost.
	// The charge then lowers the mirror only if the hold was still
	// there, which that try would have removed with it.
	again bool
}

// settleArgc is the most values of a settlement's EVALSHA (cmd).
const settleArgc = 8

// keys are the settle script's.
func (s settlement) keys() []string { return []string{s.balanceKey, s.holdsKey} }

// Scripts' SHA1s, put in interfaces once.
var (
	settleSHA   any = settleScript.Hash()
	dropHoldSHA any = dropHoldScript.Hash()
)

// cmd is the EVALSHA of the settle script, or of the drop hold script
// for a hold known by its id, that frees s, its values written in the
// room of argv (empty, with room for settleArgc), which stays as it is
// until the command is done. Its arguments point at s's fields, which
// stay as they are while s is queued or sent; a try sent again makes it
// anew once the last one's pipeline returned. The values are not part
// of s: a hold keeps its settlement for as long as its stream stays
// open, and needs them only for the round trip that frees it.
func (s *settlement) cmd(ctx context.Context, argv []any) *redis.Cmd {
	if s.byID {
		argv = append(argv, "evalsha", dropHoldSHA, 2, &s.holdsKey, &s.balanceKey, &s.member)
	} else {
		// The flag as a constant: a string a function returns would be
		// copied to the heap to go in an interface.
		var again any = "0"
		if s.again {
			again = "1"
		}
		argv = append(argv, "evalsha", settleSHA, 2, &s.balanceKey, &s.holdsKey, &s.member, &s.charge, again)
	}
	cmd := redis.NewCmd(ctx, argv[:len(argv):len(argv)]...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// settleArgv returns buf emptied, or, with too little room for the
// settlements of batch, a slice with room for them.
func settleArgv(buf []any, batch []release) []any {
	holds := 0
	for i := range batch {
		if batch[i].hold != nil {
			holds++
		}
	}
	if cap(buf) < settleArgc*holds {
		return make([]any, 0, settleArgc*holds)
	}
	return buf[:0]
}

// againArg is the settle script's flag for a try that may repeat one
// that ran.
func (s settlement) againArg() string {
	if s.again {
		return "1"
	}
	return "0"
}

// release frees what an admission took: its stream slot, its hold, or
// both.
type release struct {
	leaseKey, leaseID string      // the slot; leaseKey is empty for none
	hold              *settlement // nil for none
	queued            time.Time   // when it was added to the queue
	// giveUp is when what it frees has expired in Redis anyway
	// (Redis.releaseGiveUp). Until then a release Redis did not confirm
	// is tried again.
	giveUp time.Time
	tries  int // tries Redis did not confirm
}

// releases gathers this node's releases and sends them in one pipeline
// with whichever comes first: the node's next admission, ahead of its
// script in the same round trip, or a goroutine once the oldest of them
// has waited the gather time. Every release gets the whole gather time
// from its own arrival: a goroutine that woke the gather time after the
// first release of its round would send a later one that had waited only
// a fraction of it, just before the admission it would have ridden.
// Releases that arrive while a pipeline is in flight go in the next.
//
// A release is never dropped while what it frees can still be there: one
// whose pipeline failed, timed out or panicked, or whose command Redis
// refused, is queued again after a pause (retryPause) and goes with the
// next pipeline, until Redis confirms it or its giveUp time has passed.
// Each try is safe to repeat: removing a slot or a hold twice removes it
// once, and a repeated settlement charges the mirror only together with
// the hold's removal (settlement.again).
type releases struct {
	r       *Redis
	gather  time.Duration
	mu      sync.Mutex
	queue   []release
	sending bool // a goroutine is gathering or sending
	unsent  int  // added and not yet confirmed or given up
	flushed []chan struct{}
	// spare is the array of a batch its sender is done with (recycle),
	// which the next empty queue starts from: a queue that started
	// empty grew by doubling for every pipeline, one allocation a request
	// at one request at a time, where each release rides the next
	// admission alone.
	spare []release
}

// add queues rel to be sent within the gather time plus the round trips
// queued before it.
func (q *releases) add(rel release) {
	now := time.Now()
	rel.queued = now
	rel.giveUp = q.r.releaseGiveUp(now)
	q.mu.Lock()
	q.unsent++
	q.reuseLocked()
	q.queue = append(q.queue, rel)
	q.startLocked()
}

// reuseLocked starts an empty queue from the spare array, if there is one.
func (q *releases) reuseLocked() {
	if q.queue == nil && q.spare != nil {
		q.queue, q.spare = q.spare, nil
	}
}

// recycle takes back the array of batch, which take returned, once its
// sender is done with it: nothing may read batch after, as the next
// releases are written over it.
func (q *releases) recycle(batch []release) {
	if cap(batch) == 0 {
		return
	}
	clear(batch[:cap(batch)]) // what it freed is not kept alive
	q.mu.Lock()
	if cap(batch) > cap(q.spare) {
		q.spare = batch[:0]
	}
	q.mu.Unlock()
}

// releaseGiveUp is when what a release asked for at now frees has
// expired in Redis anyway: one lease TTL after the last renewal, which
// came before the release was asked for, and the second its expiry is
// rounded up by (redis_scripts.go), and a call's timeout for a renewal
// still on its way.
func (r *Redis) releaseGiveUp(now time.Time) time.Time {
	return now.Add(r.leaseTTL + time.Second + r.timeout)
}

// enqueue queues rels, to be sent within the gather time of each, and
// starts the gathering goroutine unless it runs.
func (q *releases) enqueue(rels []release) {
	q.mu.Lock()
	q.reuseLocked()
	q.queue = append(q.queue, rels...)
	q.startLocked()
}

// startLocked starts the gathering goroutine unless it runs, and unlocks
// q.mu.
func (q *releases) startLocked() {
	start := !q.sending
	q.sending = true
	q.mu.Unlock()
	if start {
		guard.Go(redisReleaseGoroutine, q.send)
	}
}

// Pauses before a release Redis did not confirm is tried again: the
// first short, as most failures are one lost connection or one slow
// moment, then doubling up to the longest, so that a Redis that is down
// gets a try a second from each node rather than a stream of them.
const (
	firstRetryPause = 20 * time.Millisecond
	lastRetryPause  = time.Second
)

// retryPause is the pause before the try that follows tries failed ones.
func retryPause(tries int) time.Duration {
	if tries > 6 {
		return lastRetryPause
	}
	return min(firstRetryPause<<(tries-1), lastRetryPause)
}

// retry queues failed again after a pause, each but those past their
// giveUp time, which are finished: what they free has expired in Redis.
func (q *releases) retry(failed []release) {
	if len(failed) == 0 {
		return
	}
	now := time.Now()
	var again []release
	pause := time.Duration(0)
	for _, rel := range failed {
		rel.tries++
		if now.After(rel.giveUp) {
			q.r.log.Warn("redis limiter gave up a release it could not send; what it frees has expired",
				zap.String("lease", rel.leaseID), zap.Bool("hold", rel.hold != nil), zap.Int("tries", rel.tries))
			q.finish(1)
			continue
		}
		if rel.hold != nil {
			rel.hold.again = true
		}
		pause = max(pause, retryPause(rel.tries))
		again = append(again, rel)
	}
	if len(again) == 0 {
		return
	}
	q.r.retries.Add(uint64(len(again)))
	time.AfterFunc(pause, func() {
		// Due at once: each waited its gather time before its first try.
		queued := time.Now().Add(-q.gather)
		for i := range again {
			again[i].queued = queued
		}
		q.enqueue(again)
	})
}

// finish counts n releases as done: confirmed by Redis, or given up.
func (q *releases) finish(n int) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.unsent -= n
	if q.unsent == 0 {
		for _, c := range q.flushed {
			close(c)
		}
		q.flushed = nil
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
	// Its capacity ends where the queue that is left begins: the batch's
	// array, given back (recycle), is filled up to its end only.
	k := min(len(q.queue), maxReleasePipeline)
	batch := q.queue[:k:k]
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

// Flush returns once every release gathered so far has been confirmed by
// Redis or given up, so that a node shutting down after its ledger writer
// committed sends every one of them; but at most flushWait after it was
// called, so that a stop does not wait a lease TTL for a Redis that does
// not answer (what is left then expires within LeaseTTL and a second).
func (r *Redis) Flush() {
	q := &r.releases
	q.mu.Lock()
	if q.unsent == 0 {
		q.mu.Unlock()
		return
	}
	done := make(chan struct{})
	q.flushed = append(q.flushed, done)
	q.mu.Unlock()
	t := time.NewTimer(r.flushWait())
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// flushWait bounds Flush: time for a try that times out and a few more.
func (r *Redis) flushWait() time.Duration { return 2*r.timeout + 2*time.Second }

// sendReleases sends batch in one round trip. What Redis does not
// confirm is tried again (releases.retry).
//
// The batch is finished (Redis.released) exactly once, whatever happens:
// a batch left unfinished would neither be tried again nor let Flush, and
// so a graceful stop, return before its time.
func (r *Redis) sendReleases(batch []release) {
	var finished atomic.Bool
	finish := func(cmds []releaseCmds) (onlyNoScript bool) {
		return finished.CompareAndSwap(false, true) && r.released(batch, cmds)
	}
	err := r.call(context.Background(), "release", func(ctx context.Context) error {
		// Should anything panic before the batch is finished, it is
		// finished as unsent, and so tried again. Here rather than after
		// call returns, which it may have done at its timeout.
		defer finish(nil)
		pipe := r.client.Pipeline()
		cmds := queueReleases(ctx, pipe, batch, settleArgv(nil, batch), nil)
		_, err := pipe.Exec(ctx)
		if finish(cmds) && noScript(err) {
			return nil // only a script Redis did not know: Redis answers
		}
		return err
	})
	if err == errBreakerOpen {
		finish(nil) // never sent
	}
}

// releaseCmds are the commands that carry one release in a pipeline; nil
// for what it does not free.
type releaseCmds struct {
	settle *redis.Cmd
	zrem   *redis.IntCmd
}

// queueReleases adds the commands of batch to pipe and returns them, one
// releaseCmds for each release, in buf when it has room. The
// settlements' values go in argv (settleArgv), which stays as it is
// until the pipeline is done.
func queueReleases(ctx context.Context, pipe redis.Pipeliner, batch []release, argv []any, buf []releaseCmds) []releaseCmds {
	cmds := buf[:0]
	if cap(cmds) < len(batch) {
		cmds = make([]releaseCmds, 0, len(batch))
	}
	cmds = cmds[:len(batch)]
	clear(cmds)
	used := 0
	for i := range batch {
		rel := &batch[i]
		if rel.hold != nil {
			cmds[i].settle = rel.hold.cmd(ctx, argv[used:used])
			used += len(cmds[i].settle.Args())
			_ = pipe.Process(ctx, cmds[i].settle)
		}
		if rel.leaseKey != "" {
			// The key and id by pointer, as the settlement's: batch
			// stays as it is until its pipeline is done.
			cmds[i].zrem = redis.NewIntCmd(ctx, "zrem", &rel.leaseKey, &rel.leaseID)
			cmds[i].zrem.SetFirstKeyPos(1)
			_ = pipe.Process(ctx, cmds[i].zrem)
		}
	}
	return cmds
}

// released finishes the releases of batch once their pipeline returned
// (cmds nil: it was never sent, or its fate is unknown). Those Redis
// confirmed are done; the others are tried again (releases.retry). A
// settlement Redis refused for want of its script (Redis restarted) has
// the scripts loaded before it is tried again. It reports whether every
// failure was for want of a script.
func (r *Redis) released(batch []release, cmds []releaseCmds) (onlyNoScript bool) {
	var failed []release
	missing, other := false, false
	for i, rel := range batch {
		if cmds == nil {
			failed = append(failed, rel)
			continue
		}
		var err error
		if c := cmds[i].settle; c != nil {
			err = c.Err()
			missing = missing || noScript(err)
			other = other || err != nil && !noScript(err)
		}
		if c := cmds[i].zrem; c != nil && c.Err() != nil {
			err = c.Err()
			other = true
		}
		if err != nil {
			if rel.tries == 0 {
				r.log.Warn("redis limiter could not release a slot or a hold; trying again",
					zap.String("lease", rel.leaseID), zap.Bool("hold", rel.hold != nil), zap.Error(err))
			}
			failed = append(failed, rel)
		}
	}
	r.releases.finish(len(batch) - len(failed))
	if missing {
		guard.Go(redisReleaseGoroutine, r.loadReleaseScripts)
	}
	r.releases.retry(failed)
	return cmds != nil && !other
}

// loadReleaseScripts loads the scripts releases run, which a pipeline
// cannot load itself (EVALSHA only), after Redis said it lacks them.
func (r *Redis) loadReleaseScripts() {
	_ = r.call(context.Background(), "load", func(ctx context.Context) error {
		if err := settleScript.Load(ctx, r.client).Err(); err != nil {
			return err
		}
		return dropHoldScript.Load(ctx, r.client).Err()
	})
}

// settleHold frees the hold and lowers the mirrored balance by its
// charge, in a round trip of its own; when Redis does not confirm it, it
// is tried again with the releases (releases.retry).
func (r *Redis) settleHold(s settlement) {
	err := r.call(context.Background(), "settle", func(ctx context.Context) error {
		cmd := s.cmd(ctx, make([]any, 0, settleArgc))
		_ = r.client.Process(ctx, cmd)
		if err := cmd.Err(); !noScript(err) {
			return err
		}
		return settleScript.Eval(ctx, r.client, s.keys(), s.member, s.charge, s.againArg()).Err()
	})
	if err != nil {
		r.log.Warn("redis limiter could not settle a hold; trying again",
			zap.String("hold", s.member), zap.Error(err))
		// A settlement of its own: the call may still be sending s's
		// command after its timeout.
		again := &settlement{balanceKey: s.balanceKey, holdsKey: s.holdsKey, member: s.member, charge: s.charge, again: true}
		now := time.Now()
		r.releases.mu.Lock()
		r.releases.unsent++
		r.releases.mu.Unlock()
		r.releases.retry([]release{{hold: again, queued: now, giveUp: r.releaseGiveUp(now)}})
	}
}
