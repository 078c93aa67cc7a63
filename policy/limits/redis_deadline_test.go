package limits

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

// A lone admission's context ends at its deadline as one of
// context.WithTimeout does, at most a grain late, and its children with
// it.
func TestDeadlineCtxEndsAtItsDeadline(t *testing.T) {
	var chans deadlineChans
	var c deadlineCtx
	ctx := c.start(20*time.Millisecond, &chans)
	d, ok := ctx.Deadline()
	if !ok || time.Until(d) <= 0 {
		t.Fatalf("deadline %v %v", d, ok)
	}
	if ctx.Err() != nil {
		t.Fatal("ended before its deadline")
	}
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, ctx := range []context.Context{ctx, child} {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("Done not closed at the deadline")
		}
		if time.Now().Before(d) {
			t.Fatal("Done closed before the deadline")
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err %v after Done", ctx.Err())
		}
	}
}

// Deadlines within a grain share a channel; the next grain's, and an
// earlier deadline's, have their own.
func TestDeadlineChansShareAGrain(t *testing.T) {
	var chans deadlineChans
	base := time.Now().Add(time.Hour).Truncate(deadlineGrain)
	first := chans.closedAt(base.Add(deadlineGrain / 4))
	if chans.closedAt(base.Add(deadlineGrain)) != first {
		t.Error("deadlines within a grain have channels of their own")
	}
	next := chans.closedAt(base.Add(deadlineGrain + 1))
	if next == first {
		t.Error("the next grain's deadline shares the channel before it")
	}
	if early := chans.closedAt(base); early == first || early == next {
		t.Error("an earlier deadline shares a later channel")
	}
	if chans.closedAt(base.Add(2*deadlineGrain)) != next {
		t.Error("an earlier deadline replaced the latest channel")
	}
}

// Channels handed out for deadlines out of order close in the order of
// their deadlines, each once its deadline has passed, by the one timer;
// a new grain's channel is the only allocation of a lone admission's
// deadline.
func TestDeadlineChansCloseInTurn(t *testing.T) {
	var chans deadlineChans
	now := time.Now()
	deadlines := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond, 20 * time.Millisecond}
	dones := make([]<-chan struct{}, len(deadlines))
	for i, d := range deadlines {
		dones[i] = chans.closedAt(now.Add(d))
	}
	for i, d := range deadlines {
		select {
		case <-dones[i]:
		case <-time.After(5 * time.Second):
			t.Fatalf("the channel of %v did not close", d)
		}
		if time.Since(now) < d {
			t.Errorf("the channel of %v closed after %v", d, time.Since(now))
		}
	}
	chans.mu.Lock()
	left := len(chans.pending)
	chans.mu.Unlock()
	if left != 0 {
		t.Errorf("%d channels left pending after all closed", left)
	}

	far := time.Now().Add(time.Hour)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		chans.closedAt(far.Add(time.Duration(i) * deadlineGrain))
	})
	if allocs > 1.1 && !testenv.RaceEnabled {
		t.Errorf("a new grain's channel takes %v allocations, want 1", allocs)
	}
}
