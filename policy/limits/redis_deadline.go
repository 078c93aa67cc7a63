package limits

import (
	"context"
	"slices"
	"sync"
	"time"
)

// deadlineCtx is a context that ends at its deadline and is never
// cancelled otherwise, as context.WithTimeout(context.Background(), d)
// is, for a lone admission's command (sendLone) or an admissions'
// pipeline (sendAdmits). It is part of the admission's call or of the
// admitQueue, and its Done channel is shared with the others
// whose deadlines fall in the same deadlineGrain
// (deadlineChans): WithTimeout makes a context, a channel and a timer
// for every call, and the Redis client asks for Done on every call.
// The client sets its socket's deadline from Deadline, exact; Done
// closes up to a grain after it.
type deadlineCtx struct {
	deadline time.Time
	done     <-chan struct{}
}

// start sets c to end d from now, its Done channel from chans, and
// returns it.
func (c *deadlineCtx) start(d time.Duration, chans *deadlineChans) *deadlineCtx {
	c.deadline = time.Now().Add(d)
	c.done = chans.closedAt(c.deadline)
	return c
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Done() <-chan struct{} { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *deadlineCtx) Value(any) any { return nil }

// deadlineGrain is how late a lone admission's Done may close after its
// deadline: a millisecond, against a limiter timeout of 150 ms by
// default.
const deadlineGrain = time.Millisecond

// deadlineChans hands out channels each closed at a deadline rounded up
// to a deadlineGrain, one channel for all the deadlines that round to
// it. Deadlines made one after the other with the same timeout only
// grow, so it hands out the latest channel alone again. One timer, made
// once and set for the earliest channel not closed yet, closes them all
// in turn: a timer and its function for every channel were two
// allocations a lone admission more, every admission its own
// millisecond at one client. The zero value is ready for use.
type deadlineChans struct {
	mu   sync.Mutex
	at   time.Time // the latest channel's closing time
	done chan struct{}

	// pending are the channels handed out and not closed yet, in the
	// order of their closing times; timer goes off at the first's.
	pending []deadlineChan
	timer   *time.Timer
}

// deadlineChan is a channel of deadlineChans and when it closes.
type deadlineChan struct {
	at   time.Time
	done chan struct{}
}

// closedAt returns a channel closed once deadline has passed, at most a
// deadlineGrain later.
func (d *deadlineChans) closedAt(deadline time.Time) <-chan struct{} {
	at := deadline.Truncate(deadlineGrain)
	if at.Before(deadline) {
		at = at.Add(deadlineGrain)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil && at.Equal(d.at) {
		return d.done
	}
	done := make(chan struct{})
	i := len(d.pending)
	for i > 0 && d.pending[i-1].at.After(at) {
		i-- // an earlier deadline than the latest: a shorter timeout
	}
	d.pending = slices.Insert(d.pending, i, deadlineChan{at: at, done: done})
	if i == 0 {
		d.setTimer(at)
	}
	if d.done == nil || at.After(d.at) {
		d.at, d.done = at, done
	}
	return done
}

// setTimer makes the timer go off at at, and no sooner.
func (d *deadlineChans) setTimer(at time.Time) {
	if d.timer == nil {
		d.timer = time.AfterFunc(time.Until(at), d.closeDue)
		return
	}
	d.timer.Reset(time.Until(at))
}

// closeDue closes the channels whose time has come, and sets the timer
// for the next. A late or extra run, after a Reset, closes what is due
// then, if anything.
func (d *deadlineChans) closeDue() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	n := 0
	for n < len(d.pending) && !d.pending[n].at.After(now) {
		close(d.pending[n].done)
		n++
	}
	left := copy(d.pending, d.pending[n:])
	clear(d.pending[left:])
	d.pending = d.pending[:left]
	if left > 0 {
		d.setTimer(d.pending[0].at)
	}
}
