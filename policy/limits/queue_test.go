package limits

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

func newTestQueue(t *testing.T, cfg QueueConfig) *Queue {
	t.Helper()
	q, err := NewQueue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func enter(t *testing.T, q *Queue) *Lease {
	t.Helper()
	lease, err := q.Enter(context.Background(), func(int) { t.Error("position reported for an immediate admission") })
	if err != nil {
		t.Fatalf("Enter: %v", err)
	}
	return lease
}

// waitFor polls cond; for states reached by other goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// queued enters q in a goroutine and records what happens to it.
type queued struct {
	mu        sync.Mutex
	positions []int
	lease     *Lease
	err       error
	done      chan struct{}
}

func enterAsync(ctx context.Context, q *Queue, admitted chan<- *queued) *queued {
	w := &queued{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		lease, err := q.Enter(ctx, func(p int) {
			w.mu.Lock()
			w.positions = append(w.positions, p)
			w.mu.Unlock()
		})
		w.lease, w.err = lease, err
		if err == nil && admitted != nil {
			admitted <- w
		}
	}()
	return w
}

func (w *queued) seen() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.positions)
}

func TestQueueFIFO(t *testing.T) {
	q := newTestQueue(t, QueueConfig{Limit: 1})
	first := enter(t, q)
	admitted := make(chan *queued, 3)
	var ws []*queued
	for i := range 3 {
		ws = append(ws, enterAsync(context.Background(), q, admitted))
		waitFor(t, "waiter to queue", func() bool { return q.Waiting() == i+1 })
	}
	for i, w := range ws {
		waitFor(t, "initial position", func() bool { return len(w.seen()) == 1 })
		if got := w.seen(); got[0] != i+1 {
			t.Fatalf("waiter %d first saw position %v", i+1, got)
		}
	}
	first.Release()
	for i, w := range ws {
		got := <-admitted
		if got != w {
			t.Fatalf("admission %d went to another waiter than the %d-th in line", i+1, i+1)
		}
		if want := []int{i + 1, i, i - 1}[:i+1]; !slices.Equal(w.seen(), want) {
			t.Fatalf("waiter %d saw positions %v, want %v", i+1, w.seen(), want)
		}
		for j, behind := range ws[i+1:] {
			waitFor(t, "waiters behind to move up", func() bool {
				seen := behind.seen()
				return seen[len(seen)-1] == j+1
			})
		}
		w.lease.Release()
	}
	if q.Waiting() != 0 {
		t.Fatalf("%d still waiting", q.Waiting())
	}
}

func TestQueueCancelWhileWaiting(t *testing.T) {
	q := newTestQueue(t, QueueConfig{Limit: 1})
	held := enter(t, q)
	ctx, cancel := context.WithCancel(context.Background())
	gone := enterAsync(ctx, q, nil)
	waitFor(t, "first waiter", func() bool { return q.Waiting() == 1 })
	behind := enterAsync(context.Background(), q, nil)
	waitFor(t, "second waiter", func() bool { return q.Waiting() == 2 })
	cancel()
	<-gone.done
	if !errors.Is(gone.err, context.Canceled) || gone.lease != nil {
		t.Fatalf("canceled waiter: %v, %v", gone.lease, gone.err)
	}
	waitFor(t, "the waiter behind to move up", func() bool { return slices.Equal(behind.seen(), []int{2, 1}) })
	held.Release()
	<-behind.done
	if behind.err != nil {
		t.Fatal(behind.err)
	}
	behind.lease.Release()
}

func TestQueueSlotFreedByContext(t *testing.T) {
	q := newTestQueue(t, QueueConfig{Limit: 1})
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := q.Enter(ctx, nil); err != nil {
		t.Fatal(err)
	}
	w := enterAsync(context.Background(), q, nil)
	waitFor(t, "waiter", func() bool { return q.Waiting() == 1 })
	cancel() // the holder's client went away
	<-w.done
	if w.err != nil {
		t.Fatal(w.err)
	}
}

func TestQueueRefusals(t *testing.T) {
	tests := []struct {
		name     string
		cfg      QueueConfig
		queueOne bool // let one request wait first
		wantFull bool
	}{
		{name: "full", cfg: QueueConfig{Limit: 1, MaxWaiting: 1, MaxWait: time.Minute}, queueOne: true, wantFull: true},
		{name: "wait exceeded", cfg: QueueConfig{Limit: 1, MaxWait: 20 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newTestQueue(t, tt.cfg)
			held := enter(t, q)
			defer held.Release()
			if tt.queueOne {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				enterAsync(ctx, q, nil)
				waitFor(t, "waiter", func() bool { return q.Waiting() == 1 })
			}
			lease, err := q.Enter(context.Background(), nil)
			qe, ok := errors.AsType[*QueueError](err)
			if !ok || lease != nil || qe.Full != tt.wantFull {
				t.Fatalf("Enter: %v, %v; want QueueError with Full %v", lease, err, tt.wantFull)
			}
			if e := APIError(err); e.Status != 503 || e.Code != "server_overloaded" {
				t.Fatalf("API error %+v", e)
			}
		})
	}
	if _, err := NewQueue(QueueConfig{}); err == nil {
		t.Fatal("NewQueue accepted a zero Limit")
	}
}

// TestQueueRedisAcrossNodes: with Redis slots the cap holds across nodes,
// and a waiter learns of a slot freed on another node by polling.
func TestQueueRedisAcrossNodes(t *testing.T) {
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	node := func() *Queue {
		return newTestQueue(t, QueueConfig{
			Slots: newTestRedis(t, RedisConfig{Client: c, Prefix: prefix}),
			Limit: 1, PollEvery: 10 * time.Millisecond,
		})
	}
	a, b := node(), node()
	held := enter(t, a)
	w := enterAsync(context.Background(), b, nil)
	waitFor(t, "waiter on node b", func() bool { return b.Waiting() == 1 })
	select {
	case <-w.done:
		t.Fatalf("node b admitted while node a holds the only slot: %v", w.err)
	case <-time.After(50 * time.Millisecond): // several polls
	}
	held.Release()
	<-w.done
	if w.err != nil || w.lease == nil {
		t.Fatalf("waiter on node b: %v", w.err)
	}
	w.lease.Release()
}
