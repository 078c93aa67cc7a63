// Package duration is the duration of a config value as Caddy reads its
// own: in JSON a string such as "300ms", "1.5h" or "2d", or a whole
// number of nanoseconds. It lets the config structs of the Caddy-free
// packages take durations written exactly as the Caddy modules' are,
// without importing Caddy.
package duration

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that decodes from JSON as caddy.Duration
// does. It encodes as a number of nanoseconds, as caddy.Duration does
// (neither has a MarshalJSON), so an adapted config reads the same
// whichever of the two a field has.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) == 0 {
		return io.EOF
	}
	var dur time.Duration
	var err error
	if b[0] == '"' && b[len(b)-1] == '"' {
		dur, err = Parse(strings.Trim(string(b), `"`))
	} else {
		err = json.Unmarshal(b, &dur)
	}
	*d = Duration(dur)
	return err
}

// maxLen bounds what Parse reads, as Caddy bounds it.
const maxLen = 1024

// Parse reads a duration as time.ParseDuration does, with "d" for a day
// of 24 hours besides: "1d12h", "0.5d". It is caddy.ParseDuration, so
// that a Caddyfile and a JSON config accept the same durations.
func Parse(s string) (time.Duration, error) {
	if len(s) > maxLen {
		return 0, errors.New("parsing duration: input string too long")
	}
	var inNumber bool
	var numStart int
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == 'd' {
			days, err := strconv.ParseFloat(s[numStart:i], 64)
			if err != nil {
				return 0, err
			}
			s = s[:numStart] + strconv.FormatFloat(days*24, 'f', -1, 64) + "h" + s[i+1:]
			// Read the rewritten unit's "h" again as the loop would have.
			i--
			continue
		}
		if !inNumber {
			numStart = i
		}
		inNumber = (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '+'
	}
	return time.ParseDuration(s)
}
