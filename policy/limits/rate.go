package limits

import (
	"context"
	"time"

	"github.com/switchyardhq/switchyard/policy"
)

// Rate is a request-rate limit.
//
// With Rolling false it is a GCRA limit (see the package documentation):
// requests are admitted at a sustained Limit per Period, and up to Burst at
// once after a quiet spell. With Rolling true it is an exact sliding
// window: at most Limit requests are admitted in any window of length
// Period, and Burst is ignored.
type Rate struct {
	// Requests admitted per Period. Zero or negative: no rate limit, every
	// request is admitted.
	Limit int
	// Length of the period (GCRA) or of the window (Rolling). Required
	// when Limit is positive.
	Period time.Duration
	// Most requests admitted at once after a quiet spell (GCRA only).
	// Default (0): Limit.
	Burst int
	// Rolling selects the exact sliding window instead of GCRA. Its state
	// is one timestamp per admitted request still inside the window, so it
	// costs O(Limit) memory per active key (8 bytes each in process, about
	// 50 bytes each in Redis up to 128 entries, about 130 above). Default:
	// false (GCRA); RateFor sets it from the profile, true for both
	// revisions.
	Rolling bool
}

// Enabled reports whether r limits anything.
func (r Rate) Enabled() bool { return r.Limit > 0 && r.Period > 0 }

func (r Rate) burst() int {
	if r.Burst <= 0 {
		return r.Limit
	}
	return r.Burst
}

// interval is the GCRA emission interval: Period/Limit.
func (r Rate) interval() time.Duration { return r.Period / time.Duration(r.Limit) }

// RateFor returns the per-API-key request rate of a revision profile.
//
// Both revisions' limits are exact sliding windows by default (Rolling):
// revision A's "150 per rolling 60 seconds" and revision B's "60 per
// minute" each promise a count per minute, and GCRA with Burst equal to
// Limit lets up to 2*Limit-1 requests through in some 60-second windows.
// A profile with Rolling false gets GCRA with Burst equal to Limit: a
// sustained Limit per Period with bursts of up to Limit, the way OpenAI
// enforces its per-minute limits. The package documentation has the
// arithmetic.
func RateFor(p policy.Profile) Rate {
	return Rate{
		Limit:   p.RequestsPerPeriod,
		Period:  p.Period,
		Burst:   p.RequestsPerPeriod,
		Rolling: p.Rolling,
	}
}

// RateResult is the outcome of one rate check.
type RateResult struct {
	// Allowed reports whether the request was admitted (and counted).
	Allowed bool
	// Limit is the Rate's Limit, for the x-ratelimit-limit-requests
	// header. Zero when no rate was checked.
	Limit int
	// Remaining is how many more requests would be admitted right now,
	// after this one if it was admitted.
	Remaining int
	// RetryAfter is how long until a request would be admitted. Zero when
	// this one was.
	RetryAfter time.Duration
	// ResetAfter is how long until the key is back to its full budget
	// (Remaining equal to Burst, or to Limit for a rolling window).
	ResetAfter time.Duration
}

// RateLimiter checks request rates per key. Implementations are safe for
// concurrent use.
type RateLimiter interface {
	// Allow counts one request against key if r admits it now. A refused
	// request is reported with Allowed false and a nil error; it consumes
	// nothing. An error means the limit could not be checked.
	Allow(ctx context.Context, key string, r Rate) (RateResult, error)
}
