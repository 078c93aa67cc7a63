package limits

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/switchyardhq/switchyard/internal/guard"
)

// maxAdmitPipeline bounds the admissions one pipeline carries.
const maxAdmitPipeline = 128

// admitCall is one admission on its way to Redis.
type admitCall struct {
	keys  []string
	args  []any
	reply []any
	err   error
	done  chan struct{} // closed once reply and err are set
}

// admitQueue lets a node's concurrent admissions share round trips: while
// one pipeline of admissions is in flight, those that arrive wait, and go
// together as the next pipeline the moment it returns. An admission that
// finds none in flight goes at once, so a lone request waits for no one
// and one that queued waits at most for the pipeline ahead of it. Redis
// then reads and answers one pipeline where it would read and answer one
// connection per request, and the node writes and reads once for them
// all.
type admitQueue struct {
	mu      sync.Mutex
	busy    bool // a pipeline is in flight
	waiting []*admitCall
}

// join queues c behind the pipeline in flight and reports true, or
// reports false and marks a pipeline in flight: the caller sends c.
func (q *admitQueue) join(c *admitCall) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy {
		q.waiting = append(q.waiting, c)
		return true
	}
	q.busy = true
	return false
}

// next takes up to maxAdmitPipeline of the admissions that queued, the
// oldest first, or, when none did, marks nothing in flight.
func (q *admitQueue) next() []*admitCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(len(q.waiting), maxAdmitPipeline)
	if k == 0 {
		q.busy = false
		return nil
	}
	batch := make([]*admitCall, k)
	copy(batch, q.waiting)
	n := copy(q.waiting, q.waiting[k:])
	clear(q.waiting[n:])
	q.waiting = q.waiting[:n]
	return batch
}

// runAdmit runs the admit script, in one round trip with the admissions
// that arrive meanwhile (admitQueue) and the releases this node has
// gathered (releases): what the node freed is free for its next
// admission, and a stream's end needs no round trip of its own while the
// node admits requests. A pipeline runs to its end, within the limiter's
// timeout, even if a request in it went away: the releases are other
// requests' to lose, and Admit cleans up after an admission it could not
// use.
func (r *Redis) runAdmit(_ context.Context, keys []string, args []any) ([]any, error) {
	c := &admitCall{keys: keys, args: args, done: make(chan struct{})}
	if r.admits.join(c) {
		<-c.done
		return c.reply, c.err
	}
	r.sendAdmits([]*admitCall{c})
	if next := r.admits.next(); next != nil {
		guard.Go(redisAdmitGoroutine, func() { r.sendQueuedAdmits(next) })
	}
	return c.reply, c.err
}

// sendQueuedAdmits sends batch, and then what queued behind it, until
// nothing is left.
func (r *Redis) sendQueuedAdmits(batch []*admitCall) {
	for batch != nil {
		r.sendAdmits(batch)
		batch = r.admits.next()
	}
}

// sendAdmits runs the admissions of batch, with the gathered releases
// ahead of them, and completes each. It does not panic: a panic on the
// way (in the Redis client, say) is the error of every admission it left
// without an answer, the releases it took are finished as unsent (and so
// tried again), and whoever sent the batch
// goes on to send the admissions queued behind it. A sender that died
// instead would leave the queue marked busy, and every later admission
// of the node waiting for a pipeline that never returns.
func (r *Redis) sendAdmits(batch []*admitCall) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var releases []release
	handedOver := false // releases were passed to Redis.released
	defer func() {
		if v := recover(); v != nil {
			err := guard.Recovered(redisAdmitGoroutine, v)
			for _, c := range batch {
				if c.reply == nil && c.err == nil {
					c.err = err
				}
			}
			if !handedOver {
				r.released(releases, nil)
			}
		}
		for _, c := range batch {
			close(c.done)
		}
	}()
	releases = r.releases.take()
	if len(batch) == 1 && len(releases) == 0 {
		c := batch[0]
		c.reply, c.err = admitScript.Run(ctx, r.client, c.keys, c.args...).Slice()
		return
	}
	pipe := r.client.Pipeline()
	cmds := queueReleases(ctx, pipe, releases)
	admits := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		admits[i] = pipe.EvalSha(ctx, admitScript.Hash(), c.keys, c.args...)
	}
	_, _ = pipe.Exec(ctx)
	handedOver = true
	r.released(releases, cmds)
	for i, c := range batch {
		if redis.HasErrorPrefix(admits[i].Err(), "NOSCRIPT") {
			c.reply, c.err = admitScript.Run(ctx, r.client, c.keys, c.args...).Slice()
			continue
		}
		c.reply, c.err = admits[i].Slice()
	}
}
