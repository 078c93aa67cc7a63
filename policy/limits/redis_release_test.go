package limits

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// runsScript tells the commands that run a script: the round trips that
// settle holds.
func runsScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

// TestRedisHandedOverHoldsShareARoundTrip: the holds a ledger commit
// settles together are freed with one round trip, not one each, and
// every charge still reaches the mirror.
func TestRedisHandedOverHoldsShareARoundTrip(t *testing.T) {
	l, trips := countedRedis(t, runsScript)

	const holds = 20
	settles := make([]Handed, holds)
	for i := range settles {
		settles[i] = mustHold(t, l, 1000, 10, 10).Handover()
	}
	before := trips.n.Load()
	// As the ledger writer completes a batch: each record's completion
	// in a goroutine of its own.
	var wg sync.WaitGroup
	for _, settle := range settles {
		wg.Go(func() { settle.Settle(2) })
	}
	wg.Wait()
	settled(l)
	if n := trips.n.Load() - before; n != 1 {
		t.Errorf("settling %d handed-over holds took %d round trips, want 1", holds, n)
	}
	// Nothing held any more, and the mirror took the 20 charges of 2.
	mustHold(t, l, 1000, 1000, 1000-holds*2).Release()
}

// A release waits the whole gather time from its own arrival for an
// admission to ride, however long the gathering goroutine has been up:
// a stream's release that came after the node's last admission still
// rides the next one.
func TestReleaseWaitsTheGatherFromItsOwnArrival(t *testing.T) {
	const gather = 2 * time.Millisecond
	q := &releases{gather: gather, sending: true}
	t0 := time.Now()
	q.queue = []release{{leaseKey: "first", queued: t0}}
	if batch, wait := q.due(t0.Add(gather / 2)); len(batch) != 0 || wait != gather/2 {
		t.Fatalf("half way: %d sent, wait %v; want none sent, wait %v", len(batch), wait, gather/2)
	}
	// An admission takes the first; a second arrives after it.
	if batch := q.take(); len(batch) != 1 {
		t.Fatalf("the admission took %d, want 1", len(batch))
	}
	q.queue = []release{{leaseKey: "second", queued: t0.Add(gather * 3 / 4)}}
	if batch, wait := q.due(t0.Add(gather)); len(batch) != 0 || wait != gather*3/4 {
		t.Fatalf("at the first's gather time: %d sent, wait %v; want none sent, wait %v", len(batch), wait, gather*3/4)
	}
	if batch, _ := q.due(t0.Add(gather * 7 / 4)); len(batch) != 1 || batch[0].leaseKey != "second" {
		t.Fatalf("at the second's gather time: %v, want the second sent", batch)
	}
	if batch, wait := q.due(t0.Add(2 * gather)); len(batch) != 0 || wait != 0 || q.sending {
		t.Fatalf("with nothing queued: %d sent, wait %v, sending %v; want the goroutine gone", len(batch), wait, q.sending)
	}
}

// A batch of releases its sender is done with is written over by the
// next ones, not allocated again; and a batch taken from a longer queue
// is given back without the part of its array the next batch holds.
func TestReleaseBatchesReuseTheirArray(t *testing.T) {
	q := &releases{sending: true} // no gathering goroutine: the test takes
	cycle := func(n int) {
		rels := make([]release, n)
		q.mu.Lock()
		for i := range rels {
			q.reuseLocked()
			q.queue = append(q.queue, rels[i])
		}
		q.mu.Unlock()
		for len(q.queue) > 0 {
			q.recycle(q.take())
		}
	}
	cycle(4)
	if n := testing.AllocsPerRun(100, func() { cycle(4) }); n != 1 { // rels
		t.Errorf("a batch of 4 released and given back: %v allocations, want only the test's own", n)
	}

	more := make([]release, maxReleasePipeline+2)
	for i := range more {
		more[i].leaseID = string(rune('a' + i%26))
	}
	q.enqueue(more)
	first := q.take()
	if len(first) != maxReleasePipeline || cap(first) != maxReleasePipeline {
		t.Fatalf("took %d (capacity %d), want %d", len(first), cap(first), maxReleasePipeline)
	}
	second := q.take() // its sender still reads it
	q.recycle(first)
	q.enqueue(make([]release, len(more))) // into the recycled array
	for i, rel := range second {
		if want := more[maxReleasePipeline+i].leaseID; rel.leaseID != want {
			t.Fatalf("release %d of a batch in flight became %q, want %q", i, rel.leaseID, want)
		}
	}
}
