package idle

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// alarm is the timer of a watch, which cancels the watched request's
// context when it goes off. Alarms that never went off are kept for the
// next watches (alarms): a timer is an allocation, and a /v1 request
// would otherwise make one for an answer that takes a millisecond.
//
// One that went off is never reused: its function runs in a goroutine
// of its own that may start late, and it must then find the cancel it
// was set for, not the next request's. A reset or a stop that finds the
// timer spent while it was armed tells that it went off.
//
// The timer is set once, with the headers. A write after that only
// notes its time (touch), which costs a read of the monotonic clock
// where a reset of the timer takes its lock and moves it in the
// runtime's heap of timers: a stream writes once a chunk. When the timer
// goes off it checks that time, and sets itself again for what is left
// of the silence allowed since the last write; the cut comes when it
// did when every write set the timer anew.
type alarm struct {
	timer *time.Timer

	mu     sync.Mutex         // between the owner and the timer's goroutine
	cancel context.CancelFunc // what going off calls; nil once released
	idle   time.Duration      // the silence allowed

	// lastWrite is when the answer was last written, as a time since
	// clockBase: written by the owner, read by the timer's goroutine.
	lastWrite atomic.Int64

	// The owner's, who arms and releases it from one goroutine at a
	// time.
	armed   bool // the timer was set and has not been stopped since
	wentOff bool
}

var alarms = sync.Pool{New: func() any { return newAlarm() }}

// clockBase is what lastWrite is counted from: time.Since of a time
// that carries a monotonic reading reads the monotonic clock alone.
var clockBase = time.Now()

func newAlarm() *alarm {
	a := new(alarm)
	a.timer = time.AfterFunc(time.Hour, a.goOff)
	a.timer.Stop()
	return a
}

// takeAlarm is an alarm, not armed, that calls cancel when the answer
// has been silent for idle once armed.
func takeAlarm(cancel context.CancelFunc, idle time.Duration) *alarm {
	a := alarms.Get().(*alarm)
	a.mu.Lock()
	a.cancel, a.idle = cancel, idle
	a.mu.Unlock()
	return a
}

func (a *alarm) goOff() {
	a.mu.Lock()
	cancel := a.cancel
	if cancel != nil {
		if left := a.idle - (time.Since(clockBase) - time.Duration(a.lastWrite.Load())); left > 0 {
			// Written since it was set: the silence starts at that write.
			a.timer.Reset(left)
			a.mu.Unlock()
			return
		}
	}
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// arm makes a go off once the answer has been silent for its idle from
// now on, and not at any time it was armed for before.
func (a *alarm) arm() {
	a.touch()
	// idle is written only by takeAlarm, the owner's.
	if !a.timer.Reset(a.idle) && a.armed {
		a.wentOff = true
	}
	a.armed = true
}

// touch notes a write: the silence allowed starts again from now.
func (a *alarm) touch() { a.lastWrite.Store(int64(time.Since(clockBase))) }

// release stops a, and keeps it for another watch unless it went off.
func (a *alarm) release() {
	if !a.timer.Stop() && a.armed {
		a.wentOff = true
	}
	// A goOff still to run finds nothing to cancel, and does not set
	// the timer again.
	a.mu.Lock()
	a.cancel = nil
	a.mu.Unlock()
	if a.wentOff {
		return
	}
	a.armed = false
	alarms.Put(a)
}
