package limits

import (
	"math"
	"net/http"
	"strconv"
	"time"
	"unsafe"
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
func SetHeaders(h http.Header, res RateResult) { SetHeadersIn(h, res, nil) }

// HeaderRoom is memory for the values of the headers SetHeadersIn sets,
// for a caller that has memory of its own for them (a request's state):
// this runs on every request, and the values' array and bytes were two
// allocations. A room is used once: the headers it fills keep reading
// it.
type HeaderRoom struct {
	vals [3]string
	// The values' bytes, the three end to end: room for the usual
	// ones ("1000", "999", "10ms"). Longer values take a string of
	// their own.
	text [16]byte
}

// SetHeadersIn is SetHeaders with the values in room, when it is not
// nil and not used yet; else in a room of their own, one allocation.
func SetHeadersIn(h http.Header, res RateResult, room *HeaderRoom) {
	if res.Limit <= 0 {
		return
	}
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], int64(res.Limit), 10)
	limit := len(b)
	b = strconv.AppendInt(b, int64(max(res.Remaining, 0)), 10)
	remaining := len(b)
	b = appendDuration(b, res.ResetAfter)
	if room == nil || room.vals[0] != "" {
		room = new(HeaderRoom)
	}
	var all string
	if len(b) <= len(room.text) {
		// The room's bytes are written here once and never again (a
		// used room is not written to), so a string may read them.
		n := copy(room.text[:], b)
		all = unsafe.String(&room.text[0], n)
	} else {
		all = string(b)
	}
	room.vals = [...]string{all[:limit], all[limit:remaining], all[remaining:]}
	// The names are in canonical form already.
	h[HeaderLimitRequests] = room.vals[0:1:1]
	h[HeaderRemainingRequests] = room.vals[1:2:2]
	h[HeaderResetRequests] = room.vals[2:3:3]
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

// appendDuration appends FormatDuration(d), without a string of its own
// (TestAppendDurationIsDurationString).
func appendDuration(b []byte, d time.Duration) []byte {
	switch {
	case d <= 0:
		return append(b, "0s"...)
	case d > math.MaxInt64-time.Millisecond:
		return append(b, FormatDuration(d)...) // rounding up overflows
	}
	ms := int64((d + time.Millisecond - 1) / time.Millisecond)
	if ms < 1000 {
		return append(strconv.AppendInt(b, ms, 10), "ms"...)
	}
	secs, frac := ms/1000, ms%1000
	if h := secs / 3600; h > 0 {
		b = append(strconv.AppendInt(b, h, 10), 'h')
	}
	if secs >= 60 {
		b = append(strconv.AppendInt(b, secs/60%60, 10), 'm')
	}
	b = strconv.AppendInt(b, secs%60, 10)
	if frac > 0 {
		digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 3
		for digits[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), digits[:n]...)
	}
	return append(b, 's')
}
