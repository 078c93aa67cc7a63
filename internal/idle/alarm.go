package idle

import (
	"context"
	"sync"
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
type alarm struct {
	timer *time.Timer

	mu     sync.Mutex         // between the owner and the timer's goroutine
	cancel context.CancelFunc // what going off calls

	// The owner's, who arms and releases it from one goroutine at a
	// time.
	armed   bool // the timer was set and has not been stopped since
	wentOff bool
}

var alarms = sync.Pool{New: func() any { return newAlarm() }}

func newAlarm() *alarm {
	a := new(alarm)
	a.timer = time.AfterFunc(time.Hour, a.goOff)
	a.timer.Stop()
	return a
}

// takeAlarm is an alarm, not armed, that calls cancel when it goes off.
func takeAlarm(cancel context.CancelFunc) *alarm {
	a := alarms.Get().(*alarm)
	a.mu.Lock()
	a.cancel = cancel
	a.mu.Unlock()
	return a
}

func (a *alarm) goOff() {
	a.mu.Lock()
	cancel := a.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// arm makes a go off after d, and not at any time it was armed for
// before.
func (a *alarm) arm(d time.Duration) {
	if !a.timer.Reset(d) && a.armed {
		a.wentOff = true
	}
	a.armed = true
}

// release stops a, and keeps it for another watch unless it went off.
func (a *alarm) release() {
	if !a.timer.Stop() && a.armed {
		a.wentOff = true
	}
	if a.wentOff {
		return
	}
	a.armed = false
	a.mu.Lock()
	a.cancel = nil
	a.mu.Unlock()
	alarms.Put(a)
}
