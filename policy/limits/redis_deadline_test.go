package limits

import (
	"context"
	"errors"
	"testing"
	"time"
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
