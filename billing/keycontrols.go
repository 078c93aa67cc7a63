package billing

import (
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// keyRate is the profile's request rate, or the key's own when it is
// lower: a key's rate may only tighten its account's.
func keyRate(prof policy.Profile, p policy.Principal) limits.Rate {
	rate := limits.RateFor(prof)
	perMinute := p.Controls.RatePerMinute
	if perMinute <= 0 {
		return rate
	}
	// perMinute/minute < Limit/Period, in integers.
	if !rate.Enabled() || int64(perMinute)*int64(rate.Period) < int64(rate.Limit)*int64(time.Minute) {
		return limits.Rate{Limit: perMinute, Period: time.Minute, Burst: perMinute, Rolling: rate.Rolling}
	}
	return rate
}

// keyStreams is the profile's concurrent streams per key, or the key's
// own limit when it is lower.
func keyStreams(prof policy.Profile, p policy.Principal) int {
	if n := p.Controls.StreamLimit; n > 0 && (prof.ConcurrentStreams <= 0 || n < prof.ConcurrentStreams) {
		return n
	}
	return prof.ConcurrentStreams
}

// keySpend is the key's spend limit for the limiter's reservation; the
// zero KeySpend for a key without one.
func keySpend(p policy.Principal) limits.KeySpend {
	if p.Controls.SpendLimitCents <= 0 {
		return limits.KeySpend{}
	}
	return limits.KeySpend{Key: p.KeyID, Period: p.Period, Limit: p.Controls.SpendLimitCents, Spent: p.PeriodSpendCents}
}
