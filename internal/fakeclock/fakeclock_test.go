package fakeclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	later := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		step func(t *testing.T, c *Clock) time.Time // returns what Now must read after it
		from *Clock
	}{
		{name: "zero value reads the zero time", from: &Clock{},
			step: func(t *testing.T, c *Clock) time.Time { return time.Time{} }},
		{name: "New reads its start", from: New(start),
			step: func(t *testing.T, c *Clock) time.Time { return start }},
		{name: "Advance moves forward and returns the new time", from: New(start),
			step: func(t *testing.T, c *Clock) time.Time {
				got := c.Advance(90 * time.Second)
				if want := start.Add(90 * time.Second); !got.Equal(want) {
					t.Errorf("Advance returned %v, want %v", got, want)
				}
				return start.Add(90 * time.Second)
			}},
		{name: "negative Advance moves back", from: New(start),
			step: func(t *testing.T, c *Clock) time.Time {
				c.Advance(-time.Hour)
				return start.Add(-time.Hour)
			}},
		{name: "zero value advances from the zero time", from: &Clock{},
			step: func(t *testing.T, c *Clock) time.Time {
				c.Advance(time.Minute)
				return time.Time{}.Add(time.Minute)
			}},
		{name: "Set replaces the time", from: New(start),
			step: func(t *testing.T, c *Clock) time.Time {
				c.Advance(time.Hour)
				c.Set(later)
				return later
			}},
		{name: "Now does not move by itself", from: New(start),
			step: func(t *testing.T, c *Clock) time.Time {
				c.Now()
				c.Now()
				return start
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.step(t, tc.from)
			if got := tc.from.Now(); !got.Equal(want) {
				t.Errorf("Now() = %v, want %v", got, want)
			}
		})
	}
}

// TestConcurrentAdvance checks that no step is lost when goroutines move
// and read the clock at once; run it with -race to check the locking too.
func TestConcurrentAdvance(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(start)
	const workers, steps = 8, 1000
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(workers*steps*time.Millisecond); !got.Equal(want) {
		t.Errorf("after %d steps: %v, want %v", workers*steps, got, want)
	}
}
