package limits

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is a context that ends at its deadline and is never
// cancelled otherwise, as context.WithTimeout(context.Background(), d)
// is, for a lone admission's command (sendLone). Its Done channel, and
// the timer that closes it, are made only when something asks for them:
// the Redis client reads a call's deadline for its socket (Deadline),
// and waits on Done only when it has to wait for a connection, so the
// usual admission needs neither. WithTimeout makes the context, its
// channel and its timer on every call.
type deadlineCtx struct {
	deadline time.Time

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	timer *time.Timer   // closes done at the deadline
	ended bool          // done is closed
}

// start sets c to end d from now and returns it.
func (c *deadlineCtx) start(d time.Duration) *deadlineCtx {
	c.deadline = time.Now().Add(d)
	return c
}

// stop lets go of the timer, if Done made one: the command has
// returned, and nothing waits for the deadline any more.
func (c *deadlineCtx) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if left := time.Until(c.deadline); left > 0 {
			c.timer = time.AfterFunc(left, c.end)
		} else {
			c.endLocked()
		}
	}
	return c.done
}

// Err reports the deadline passed once it has, closing Done first if it
// was made, so that Err is not nil only once Done is closed.
func (c *deadlineCtx) Err() error {
	if time.Now().Before(c.deadline) {
		return nil
	}
	c.end()
	return context.DeadlineExceeded
}

func (c *deadlineCtx) Value(any) any { return nil }

func (c *deadlineCtx) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked()
}

func (c *deadlineCtx) endLocked() {
	// Without a channel yet, Done makes one closed.
	if c.done != nil && !c.ended {
		close(c.done)
		c.ended = true
	}
}
