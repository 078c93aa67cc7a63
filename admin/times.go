package admin

import (
	"net/url"
	"strconv"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// The admin API writes and takes every time as Unix seconds, an integer,
// as /v3 and the OpenAI administration APIs its SDKs read do
// (docs/admin.md, "Times"). Whole days (the usage report's) stay
// YYYY-MM-DD.

// maxUnixSeconds is the last second of year 9999: a larger value is
// milliseconds or nanoseconds sent by mistake, not a time.
const maxUnixSeconds = 253402300799

// exampleUnix is the example the refusals give: 2026-01-01T00:00:00Z.
const exampleUnix = "1767225600"

// unixTime is t in Unix seconds.
func unixTime(t time.Time) int64 { return t.Unix() }

// UnixTimeOrNull is t in Unix seconds, nil (JSON null) for the zero
// time: how the admin API, and the CLI's --json, write a time that may
// not have happened.
func UnixTimeOrNull(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	s := t.Unix()
	return &s
}

// validUnixSeconds tells whether s is a time the admin API takes: 0 to
// the end of year 9999.
func validUnixSeconds(s int64) bool { return s >= 0 && s <= maxUnixSeconds }

// timeParam reads query parameter name as Unix seconds, refusing any
// other text (an RFC 3339 string, a date, milliseconds) with 400 and
// code; the zero time when it is absent.
func timeParam(v url.Values, name, code string) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s[0] == '+' || !validUnixSeconds(n) {
		return time.Time{}, apierror.InvalidRequest(code, timeMessage(name))
	}
	return time.Unix(n, 0).UTC(), nil
}

// timeMessage says how a time parameter or field is written.
func timeMessage(name string) string {
	return name + " is a time in Unix seconds, such as " + exampleUnix + " for 2026-01-01 00:00:00 UTC."
}
