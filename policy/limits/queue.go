package limits

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// QueueConfig configures an admission queue.
type QueueConfig struct {
	// Slots is where in-flight slots come from. Pass a *Redis to cap
	// generations across all nodes. Default (nil): a private in-process
	// counter, a cap per node.
	Slots Leaser
	// Key is the Slots key counting the slots. Default (""): "inflight".
	Key string
	// Limit is how many requests may hold a slot at once. Required.
	Limit int
	// MaxWaiting is how many requests may wait on this node at once; one
	// more is refused with a *QueueError at once. Default (0): 100.
	MaxWaiting int
	// MaxWait is how long a request may wait before it is refused with a
	// *QueueError. Default (0): 30s.
	MaxWait time.Duration
	// PollEvery is how often the first waiter asks Slots again while no
	// release on this node has woken it, which is how it learns of slots
	// freed on other nodes or by other users of Slots. Default (0): 250ms
	// when Slots is set; never for the private counter, whose every
	// release wakes the first waiter.
	PollEvery time.Duration
}

// Queue is an admission queue: a cap on requests in flight towards the
// upstream, with a bounded first-in-first-out wait for a slot. Waiting
// requests learn their position as it changes, for queue_position chunks.
//
// Order is first-in-first-out among the requests waiting on one node.
// With Redis slots, nodes do not queue behind each other: the first
// waiter of each node polls, and whichever asks first after a slot frees
// gets it. The cap itself holds across nodes.
type Queue struct {
	slots      Leaser
	key        string
	limit      int
	maxWaiting int
	maxWait    time.Duration
	pollEvery  time.Duration

	mu      sync.Mutex
	waiters list.List // of *waiter, first in front
}

type waiter struct {
	pos  int           // 1 for the first waiter; guarded by Queue.mu
	elem *list.Element // guarded by Queue.mu
	sig  chan struct{} // position changed or a slot may be free
}

// NewQueue returns an admission queue.
func NewQueue(cfg QueueConfig) (*Queue, error) {
	if cfg.Limit <= 0 {
		return nil, errors.New("limits: QueueConfig.Limit must be positive")
	}
	q := &Queue{
		slots:      cfg.Slots,
		key:        cfg.Key,
		limit:      cfg.Limit,
		maxWaiting: cfg.MaxWaiting,
		maxWait:    cfg.MaxWait,
		pollEvery:  cfg.PollEvery,
	}
	if q.key == "" {
		q.key = "inflight"
	}
	if q.maxWaiting <= 0 {
		q.maxWaiting = 100
	}
	if q.maxWait <= 0 {
		q.maxWait = 30 * time.Second
	}
	if q.slots == nil {
		q.slots = NewLocal(LocalConfig{})
	} else if q.pollEvery <= 0 {
		q.pollEvery = 250 * time.Millisecond
	}
	return q, nil
}

// Waiting is how many requests are waiting.
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiters.Len()
}

// Enter returns a slot, waiting for one if all are taken. While it waits
// it calls onPosition (if not nil) from the calling goroutine with the
// request's position, 1 being next, whenever the position changes; a
// request admitted at once sees no call. The slot is released by
// Release or when ctx is done. Enter returns a *QueueError when the queue
// is full or the wait exceeds MaxWait, ctx's error when ctx ends first,
// and any error of Slots other than its *LimitError.
func (q *Queue) Enter(ctx context.Context, onPosition func(position int)) (*Lease, error) {
	start := time.Now()
	q.mu.Lock()
	if q.waiters.Len() == 0 {
		q.mu.Unlock()
		if lease, err := q.try(ctx); lease != nil || !isLimit(err) {
			return lease, err
		}
		q.mu.Lock()
	}
	if q.waiters.Len() >= q.maxWaiting {
		q.mu.Unlock()
		return nil, &QueueError{Full: true}
	}
	w := &waiter{sig: make(chan struct{}, 1)}
	w.elem = q.waiters.PushBack(w)
	w.pos = q.waiters.Len()
	q.mu.Unlock()

	deadline := time.NewTimer(q.maxWait)
	defer deadline.Stop()
	var poll *time.Timer
	if q.pollEvery > 0 {
		poll = time.NewTimer(q.pollEvery)
		defer poll.Stop()
	}
	reported := 0
	for {
		q.mu.Lock()
		pos := w.pos
		q.mu.Unlock()
		if pos == 1 {
			if lease, err := q.try(ctx); lease != nil || !isLimit(err) {
				q.leave(w)
				return lease, err
			}
		}
		if pos != reported && onPosition != nil {
			onPosition(pos)
			reported = pos
		}
		var pollC <-chan time.Time
		if pos == 1 && poll != nil {
			poll.Reset(q.pollEvery)
			pollC = poll.C
		}
		select {
		case <-w.sig:
		case <-pollC:
		case <-ctx.Done():
			q.leave(w)
			return nil, ctx.Err()
		case <-deadline.C:
			q.leave(w)
			return nil, &QueueError{Waited: time.Since(start)}
		}
	}
}

func isLimit(err error) bool {
	_, ok := errors.AsType[*LimitError](err)
	return ok
}

// try asks Slots for a slot. A slot's release wakes the first waiter.
func (q *Queue) try(ctx context.Context) (*Lease, error) {
	lease, err := q.slots.Acquire(ctx, q.key, q.limit)
	if lease != nil {
		lease.onRelease(q.wakeFirst)
	}
	return lease, err
}

func (q *Queue) wakeFirst() {
	q.mu.Lock()
	if e := q.waiters.Front(); e != nil {
		signal(e.Value.(*waiter).sig)
	}
	q.mu.Unlock()
}

// leave removes w and moves everyone behind it up by one.
func (q *Queue) leave(w *waiter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	next := w.elem.Next()
	q.waiters.Remove(w.elem)
	for e := next; e != nil; e = e.Next() {
		o := e.Value.(*waiter)
		o.pos--
		signal(o.sig)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
