package humantime

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 seconds"},
		{300 * time.Microsecond, "1 millisecond"},
		{250 * time.Millisecond, "250 milliseconds"},
		{time.Second, "1 second"},
		{1500 * time.Millisecond, "2 seconds"},
		{90 * time.Second, "1 minute 30 seconds"},
		{time.Hour, "1 hour"},
		{time.Hour + 30*time.Second, "1 hour"},
		{26 * time.Hour, "1 day 2 hours"},
		{30 * 24 * time.Hour, "30 days"},
	} {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
