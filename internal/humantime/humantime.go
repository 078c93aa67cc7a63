// Package humantime writes durations for people, in messages and on
// pages: "1 hour", "90 seconds", "2 minutes 30 seconds", never Go's
// "1h0m0s".
package humantime

import (
	"strconv"
	"strings"
	"time"
)

// Duration writes d in its largest unit and, when not zero, the next
// smaller one, each a whole number; below a second it is milliseconds, rounded up so that a
// wait is never shown shorter than it is.
func Duration(d time.Duration) string {
	if d <= 0 {
		return "0 seconds"
	}
	if d < time.Second {
		return count((d+time.Millisecond-1)/time.Millisecond, "millisecond")
	}
	d = (d + time.Second - 1).Truncate(time.Second)
	units := []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}
	for i, u := range units {
		if d < u.size {
			continue
		}
		parts := []string{count(d/u.size, u.name)}
		// The next smaller unit, when it counts: "1 hour 30 minutes",
		// but not "1 hour 30 seconds".
		if i+1 < len(units) {
			if n := d % u.size / units[i+1].size; n > 0 {
				parts = append(parts, count(n, units[i+1].name))
			}
		}
		return strings.Join(parts, " ")
	}
	return "0 seconds" // not reached: d is at least a second
}

func count(n time.Duration, unit string) string {
	s := strconv.FormatInt(int64(n), 10) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}
