package limits

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A lone admission's context ends at its deadline as one of
// context.WithTimeout does, whether Done was asked for before the
// deadline, after it, or never.
func TestDeadlineCtxEndsAtItsDeadline(t *testing.T) {
	var early deadlineCtx
	ctx := early.start(20 * time.Millisecond)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) <= 0 {
		t.Fatalf("deadline %v %v", d, ok)
	}
	if ctx.Err() != nil {
		t.Fatal("ended before its deadline")
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed at the deadline")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v after Done", ctx.Err())
	}

	var late deadlineCtx
	ctx = late.start(time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v past the deadline", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done asked for past the deadline is not closed")
	}

	// A child sees the parent end.
	var parent deadlineCtx
	child, cancel := context.WithCancel(parent.start(10 * time.Millisecond))
	defer cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a child did not end with its parent")
	}
	parent.stop()
}

// Stopped before its deadline, as sendLone stops it once the command
// returns, it does not end early, and Err still reports the deadline
// once it has passed.
func TestDeadlineCtxStop(t *testing.T) {
	var c deadlineCtx
	ctx := c.start(10 * time.Millisecond)
	done := ctx.Done()
	ctx.stop()
	select {
	case <-done:
		t.Fatal("stopping ended it")
	default:
	}
	time.Sleep(15 * time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v past the deadline", ctx.Err())
	}
	select {
	case <-done:
	default:
		t.Fatal("Err past the deadline left Done open")
	}
}
