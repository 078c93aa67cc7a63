package limits

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/testenv"
)

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"zero", 0, "0s"},
		{"negative", -time.Second, "0s"},
		{"emission interval of A", 400 * time.Millisecond, "400ms"},
		{"one second", time.Second, "1s"},
		{"rounded up to the millisecond", 1500*time.Microsecond + 1, "2ms"},
		{"fractional seconds", 59600 * time.Millisecond, "59.6s"},
		{"minutes", 6 * time.Minute, "6m0s"},
		{"sub-millisecond", time.Nanosecond, "1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FormatDuration(tt.d); got != tt.want {
				t.Fatalf("FormatDuration(%s) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestSetHeaders(t *testing.T) {
	tests := []struct {
		name string
		res  RateResult
		want map[string]string
	}{
		{
			name: "admitted",
			res:  RateResult{Allowed: true, Limit: 60, Remaining: 59, ResetAfter: time.Second},
			want: map[string]string{HeaderLimitRequests: "60", HeaderRemainingRequests: "59", HeaderResetRequests: "1s"},
		},
		{
			name: "refused",
			res:  RateResult{Limit: 150, RetryAfter: 400 * time.Millisecond, ResetAfter: time.Minute},
			want: map[string]string{HeaderLimitRequests: "150", HeaderRemainingRequests: "0", HeaderResetRequests: "1m0s"},
		},
		{
			name: "longer than a room's bytes",
			res:  RateResult{Allowed: true, Limit: 1_000_000_000, Remaining: 999_999_999, ResetAfter: 59999 * time.Millisecond},
			want: map[string]string{HeaderLimitRequests: "1000000000", HeaderRemainingRequests: "999999999", HeaderResetRequests: "59.999s"},
		},
		{
			name: "no rate checked",
			res:  RateResult{Allowed: true},
			want: map[string]string{HeaderLimitRequests: "", HeaderRemainingRequests: "", HeaderResetRequests: ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			SetHeaders(h, tt.res)
			for k, v := range tt.want {
				if got := h.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// The headers' values take one allocation, and none in a room of the
// caller's; a room used once is not written again, as the first headers
// still read it.
func TestSetHeadersInARoom(t *testing.T) {
	res := RateResult{Allowed: true, Limit: 1000, Remaining: 999, ResetAfter: 10 * time.Millisecond}
	h := http.Header{}
	if n := testing.AllocsPerRun(100, func() { SetHeaders(h, res) }); n != 1 && !testenv.RaceEnabled {
		t.Errorf("SetHeaders allocates %v objects, want 1", n)
	}
	var rooms [101]HeaderRoom
	i := 0
	if n := testing.AllocsPerRun(100, func() { SetHeadersIn(h, res, &rooms[i]); i++ }); n != 0 && !testenv.RaceEnabled {
		t.Errorf("SetHeadersIn allocates %v objects in a room, want none", n)
	}
	var room HeaderRoom
	first := http.Header{}
	SetHeadersIn(first, res, &room)
	SetHeadersIn(http.Header{}, RateResult{Limit: 60, Remaining: 1, ResetAfter: time.Second}, &room)
	if got := first.Get(HeaderLimitRequests) + " " + first.Get(HeaderRemainingRequests) + " " + first.Get(HeaderResetRequests); got != "1000 999 10ms" {
		t.Errorf("the first headers read %q after the room's second use, want 1000 999 10ms", got)
	}
}

// SetHeaders writes the header map directly: its names must be canonical
// for Get to find them.
func TestHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range []string{HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests} {
		if c := http.CanonicalHeaderKey(name); c != name {
			t.Errorf("%q is not canonical (%q)", name, c)
		}
	}
}

// TestAppendDurationIsDurationString: the duration SetHeaders writes
// without a string of its own is time.Duration's String of it rounded
// up to the millisecond.
func TestAppendDurationIsDurationString(t *testing.T) {
	check := func(d time.Duration) {
		want := FormatDuration(d)
		if got := string(appendDuration([]byte("x"), d))[1:]; got != want {
			t.Fatalf("%d ns: %q, want %q", int64(d), got, want)
		}
	}
	for ms := range int64(200_000) {
		check(time.Duration(ms) * time.Millisecond)
		check(time.Duration(ms)*time.Millisecond + 1)
	}
	for _, d := range []time.Duration{-1, 59600 * time.Millisecond, time.Hour, time.Hour + time.Millisecond,
		25*time.Hour + 61*time.Second + 10*time.Millisecond, math.MaxInt64 - time.Millisecond, math.MaxInt64} {
		check(d)
	}
}

// BenchmarkSetHeaders: the headers of one admitted request, into a fresh
// header as a response's.
func BenchmarkSetHeaders(b *testing.B) {
	res := RateResult{Allowed: true, Limit: 100000000, Remaining: 99999998, ResetAfter: time.Second}
	b.ReportAllocs()
	for b.Loop() {
		SetHeaders(make(http.Header, 4), res)
	}
}
