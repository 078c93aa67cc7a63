package limits

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// maxRenewPipeline bounds the renewals of one pipeline.
const maxRenewPipeline = 512

// renewals keeps this node's leases and holds alive in Redis. While there
// is any, one goroutine renews every one of them each LeaseTTL/3, in
// pipelined round trips of up to maxRenewPipeline. A goroutine per lease
// and per hold would cost every open stream two goroutines, whose stacks
// grow deep in the Redis client, and a node with 1,000 open streams 200
// round trips a second.
//
// A lease or hold is renewed within LeaseTTL/3 of being added and every
// LeaseTTL/3 after, as its own heartbeat would. One Redis reports gone
// (it expired while renewals failed for a whole TTL; its slot or money
// may be counted for another holder by now) is logged and no longer
// renewed; one whose renewal failed is tried again after a pause, and
// at the next tick in any case.
type renewals struct {
	r       *Redis
	mu      sync.Mutex
	live    renewal // the ring of those renewed: added and removed without hashing
	n       int     // in the ring
	running bool
}

// renewal is one lease or hold: member of the sorted set at keys[0]; a
// hold's sum is at keys[1], empty for a lease. It is part of every open
// stream's lease and hold, so it keeps nothing else: its loss is logged
// with its keys and member, which name the key or account and the id.
type renewal struct {
	keys       [2]string
	member     string
	prev, next *renewal // in renewals.live; nil when not renewed
}

// add starts renewing x and returns it, the handle that remove takes.
func (q *renewals) add(x *renewal) *renewal {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.live.next == nil {
		q.live.prev, q.live.next = &q.live, &q.live
	}
	x.prev, x.next = q.live.prev, &q.live
	x.prev.next, q.live.prev = x, x
	q.n++
	if !q.running {
		q.running = true
		guard.Go(redisRenewGoroutine, q.run)
	}
	return x
}

// remove stops renewing x. Removing twice does nothing.
func (q *renewals) remove(x *renewal) {
	q.mu.Lock()
	q.unlinkLocked(x)
	q.mu.Unlock()
}

// unlinkLocked takes x out of the ring, if it is in it, and reports
// whether it was.
func (q *renewals) unlinkLocked(x *renewal) bool {
	if x.next == nil {
		return false
	}
	x.prev.next, x.next.prev = x.next, x.prev
	x.prev, x.next = nil, nil
	q.n--
	return true
}

// stillLive reports whether x is still renewed; unless keep, it stops
// renewing it.
func (q *renewals) stillLive(x *renewal, keep bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if keep {
		return x.next != nil
	}
	return q.unlinkLocked(x)
}

// run renews everything live at each tick and ends at the first tick
// that finds nothing to renew. A batch whose renewal failed is tried
// again after a pause (retryPause, from 20ms up to a second, and never
// past the next tick) rather than only at the next tick: a lease that
// missed three ticks in a row has expired under its request.
func (q *renewals) run() {
	every := max(q.r.leaseTTL/3, time.Millisecond)
	if q.r.renewEvery > 0 {
		every = q.r.renewEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var failed []*renewal
	tries := 0
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	for {
		var due []*renewal
		select {
		case <-t.C:
			q.mu.Lock()
			if q.n == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			due = make([]*renewal, 0, q.n)
			for x := q.live.next; x != &q.live; x = x.next {
				due = append(due, x)
			}
			q.mu.Unlock()
			failed, tries = nil, 0
			retry.Stop()
		case <-retry.C:
			due = q.stillLiveOf(failed)
			failed = nil
		}
		for batch := range slices.Chunk(due, maxRenewPipeline) {
			// A batch whose renewal panicked is tried again, as one
			// whose renewal failed; the loop goes on, or every lease and
			// hold of the node would expire under requests still running.
			ok := false
			_ = guard.Run(redisRenewGoroutine, func() { ok = q.renew(batch) })
			if !ok {
				failed = append(failed, batch...)
			}
		}
		if len(failed) > 0 {
			tries++
			retry.Reset(min(retryPause(tries), every))
		}
	}
}

// stillLiveOf is those of xs still renewed.
func (q *renewals) stillLiveOf(xs []*renewal) []*renewal {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.DeleteFunc(xs, func(x *renewal) bool { return x.next == nil })
}

// renewArgc is the most values of a renewal's EVALSHA: the command,
// the script, the number of keys, two keys, now, the member and the TTL.
const renewArgc = 8

// renewSHA is the renew script's SHA1, put in an interface once.
var renewSHA any = renewScript.Hash()

// renew extends batch in one round trip and reports whether Redis
// answered. It runs outside any request, so it has no request context;
// the breaker spares Redis while it is down.
//
// Every tick renews every open stream's lease and hold, so what a
// renewal allocates is garbage made again and again for as long as a
// stream stays open: the commands' values are one slice for the batch,
// the renewals' keys and members go in by pointer (a pointer fits in an
// interface as it is, where a string is copied to the heap first), and
// a renewal's own allocation is its command. The slice is the batch's
// own, not kept for the next: a call that timed out may still be writing
// it.
func (q *renewals) renew(batch []*renewal) bool {
	r := q.r
	cmds := make([]redis.Cmder, len(batch))
	err := r.call(context.Background(), "renew", func(ctx context.Context) error {
		argv := make([]any, 0, renewArgc*len(batch))
		// Once for the batch: "" (the server's clock) boxes without an
		// allocation.
		now, ttl := any(r.nowArg()), any(seconds(r.leaseTTL))
		for i, x := range batch {
			from := len(argv)
			argv = append(argv, "evalsha", renewSHA, 1, &x.keys[0])
			if x.keys[1] != "" {
				argv[from+2] = 2
				argv = append(argv, &x.keys[1])
			}
			argv = append(argv, now, &x.member, ttl)
			cmd := redis.NewCmd(ctx, argv[from:len(argv):len(argv)]...)
			cmd.SetFirstKeyPos(3)
			cmds[i] = cmd
		}
		pipe := r.client.Pipeline()
		_ = pipe.BatchProcess(ctx, cmds...)
		_, err := pipe.Exec(ctx)
		return err
	})
	if noScript(err) {
		// Redis restarted, or a replica that never ran the script took
		// over: load it (on every primary of a cluster), and the retry
		// renews the batch.
		_ = r.call(context.Background(), "load", func(ctx context.Context) error {
			return renewScript.Load(ctx, r.client).Err()
		})
		return false
	}
	if err != nil {
		return false // a reply may still be written by a call that timed out
	}
	for i, x := range batch {
		n, err := cmds[i].(*redis.Cmd).Int()
		if err != nil {
			continue
		}
		kept := n == 1
		if !q.stillLive(x, kept) {
			continue // released meanwhile: its answer tells nothing
		}
		if !kept {
			x.lost(r.log)
		}
		if r.onRenew != nil {
			r.onRenew(kept)
		}
	}
	return true
}

// lost logs that the renewals found x gone.
func (x *renewal) lost(log *zap.Logger) {
	if x.keys[1] == "" {
		// The stream goes on; its slot may be counted for another holder,
		// so the limit is exceeded by one until the stream ends. Re-adding
		// it could push others over.
		log.Warn("redis limiter lost a lease that expired while renewals failed",
			zap.String("set", x.keys[0]), zap.String("lease", x.member))
		return
	}
	id, _, _ := strings.Cut(x.member, "|") // "<id>|<cents>"
	log.Warn("redis limiter lost a hold that expired while renewals failed",
		zap.String("holds", x.keys[0]), zap.String("hold", id))
}
