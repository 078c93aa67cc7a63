package limits

import (
	"net/http"
	"strconv"
	"time"
)

// Header names, as OpenAI sends them.
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
)

// SetHeaders sets the x-ratelimit-*-requests headers from a rate result:
// the limit, the requests remaining right now, and the time until the
// budget is full again in OpenAI's duration format. A result with no rate
// checked (Limit 0) sets nothing.
func SetHeaders(h http.Header, res RateResult) {
	if res.Limit <= 0 {
		return
	}
	// One array for the three values rather than one per Set: this runs
	// on every request. The names are in canonical form already.
	v := [...]string{strconv.Itoa(res.Limit), strconv.Itoa(max(res.Remaining, 0)), FormatDuration(res.ResetAfter)}
	vals := v[:]
	h[HeaderLimitRequests] = vals[0:1:1]
	h[HeaderRemainingRequests] = vals[1:2:2]
	h[HeaderResetRequests] = vals[2:3:3]
}

// FormatDuration writes d the way OpenAI writes x-ratelimit-reset-*
// values ("400ms", "1s", "59.6s", "6m0s"): Go's duration syntax, rounded
// up to the millisecond so that a client waiting that long is not early.
// Negative durations are "0s".
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return (d + time.Millisecond - 1).Truncate(time.Millisecond).String()
}
