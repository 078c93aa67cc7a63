// Package fakeclock holds a clock for tests that moves only when the test
// moves it, so that expiry, rate windows and timestamps can be checked
// without sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable clock. Its Now method has the signature of
// time.Now, so a test passes c.Now wherever code takes a func() time.Time.
//
// The zero value is ready to use and reads the zero time.Time until Set
// or Advance moves it; New starts a clock elsewhere. A Clock is safe for
// concurrent use. It must not be copied after first use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock that reads start until it is moved.
func New(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative) and
// returns the new time, so a test can note the instant of the step it
// takes.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
