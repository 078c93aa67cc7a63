package limits

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// settleGather is how long a hold's settlement waits for others to share
// its round trip. Holds are settled by the ledger writer's completions,
// which arrive together, one burst per commit: gathered, a commit of
// twenty charges frees their holds with one round trip instead of
// twenty. The hold is freed that much later, which only delays the
// moment its money can be held again.
const settleGather = 500 * time.Microsecond

// maxSettlePipeline bounds one pipeline of settlements.
const maxSettlePipeline = 256

// settlement is one hold to free, with the charge to take off the
// mirrored balance.
type settlement struct {
	balanceKey, holdsKey, member string
	charge                       int64
}

// settlements sends holds' settlements to Redis in pipelines: the first
// one waits settleGather for company, and those that arrive while a
// pipeline is in flight go in the next.
type settlements struct {
	r       *Redis
	mu      sync.Mutex
	queue   []settlement
	sending bool // a goroutine is gathering or sending; it takes the queue
	unsent  sync.WaitGroup
}

// add queues s; a goroutine sends it within settleGather plus the round
// trips queued before it.
func (q *settlements) add(s settlement) {
	q.unsent.Add(1)
	q.mu.Lock()
	q.queue = append(q.queue, s)
	start := !q.sending
	q.sending = true
	q.mu.Unlock()
	if start {
		go q.send()
	}
}

func (q *settlements) send() {
	time.Sleep(settleGather)
	for {
		q.mu.Lock()
		batch := q.queue[:min(len(q.queue), maxSettlePipeline)]
		q.queue = q.queue[len(batch):]
		if len(batch) == 0 {
			q.queue = nil
			q.sending = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		q.r.settleHolds(batch)
		q.unsent.Add(-len(batch))
	}
}

// Flush returns once the hold settlements gathered so far have been sent
// to Redis (or failed), so that a node shutting down after its ledger
// writer committed sends every one of them.
func (r *Redis) Flush() { r.settles.unsent.Wait() }

// settleHolds frees the holds of batch and lowers their mirrored
// balances, in one round trip. When Redis does not answer, each hold
// expires within LeaseTTL and each mirror, which then lacks the charge,
// within BalanceTTL. Should Redis not know the script (it restarted),
// the refused settlements are sent again one by one, which loads it.
func (r *Redis) settleHolds(batch []settlement) {
	var retry []settlement
	err := r.call(context.Background(), "settle", func(ctx context.Context) error {
		pipe := r.client.Pipeline()
		cmds := make([]*redis.Cmd, len(batch))
		for i, s := range batch {
			cmds[i] = pipe.EvalSha(ctx, settleScript.Hash(), []string{s.balanceKey, s.holdsKey}, s.member, s.charge)
		}
		_, err := pipe.Exec(ctx)
		for i, cmd := range cmds {
			if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				retry = append(retry, batch[i])
			}
		}
		if len(retry) > 0 {
			return nil
		}
		return err
	})
	if err != nil {
		for _, s := range batch {
			if s.charge > 0 {
				r.log.Warn("redis limiter could not lower a mirrored balance by a charge",
					zap.String("hold", s.member), zap.Error(err))
			}
		}
		return // retry may still be written by a reply that came too late
	}
	for _, s := range retry {
		r.settleHold(s.balanceKey, s.holdsKey, s.member, s.charge)
	}
}
