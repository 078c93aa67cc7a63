package admin

import (
	"time"

	"github.com/switchyardhq/switchyard/policy/limits"
)

// RateOf is the rate of a limit configured as n per period, each falling
// back to def's when unset (n nil, period not positive); n = 0 is no
// limit.
func RateOf(n *int, period time.Duration, def limits.Rate) limits.Rate {
	r := def
	if n != nil {
		r.Limit = *n
	}
	if period > 0 {
		r.Period = period
	}
	return r
}
