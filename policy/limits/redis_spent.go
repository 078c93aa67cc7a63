package limits

import (
	"sync"
	"sync/atomic"
	"time"
)

// spentRates is what a node learnt from Redis's answers to its own
// admissions: for each key whose rate an answer showed spent, until when
// the rate refuses every request. It lets Precheck refuse such a key
// before its request's body is read, without asking Redis.
//
// The time is a lower bound whatever other nodes do: a rate never gives
// back what it admitted, so other nodes' admissions can only push the
// key's next admission later, never earlier. It is taken from when the
// admission was sent, not when its answer came, so that the node never
// refuses a request Redis would admit.
//
// Reads are lock-free (a sync.Map read on every request with a body);
// writes come only with answers that show a rate spent.
type spentRates struct {
	m       sync.Map     // key → *spentRate
	sweepAt atomic.Int64 // unix nanoseconds of the next sweep
}

// spentRate is one key's spent rate: the Rate it was spent under (a
// reload may change it), until when it refuses, and when the key is back
// to its full budget, for the x-ratelimit headers.
type spentRate struct {
	rate         Rate
	until, reset time.Time
}

// spentSweepEvery bounds the memory of the entries whose time passed: at
// most those of the keys spent within about this much time.
const spentSweepEvery = time.Minute

// spend records that key's rate refuses every request until
// sent+retryAfter, and is whole again at sent+resetAfter.
func (s *spentRates) spend(key string, rate Rate, sent time.Time, retryAfter, resetAfter time.Duration) {
	if retryAfter <= 0 {
		return
	}
	s.m.Store(key, &spentRate{rate: rate, until: sent.Add(retryAfter), reset: sent.Add(resetAfter)})
	if at := s.sweepAt.Load(); sent.UnixNano() >= at && s.sweepAt.CompareAndSwap(at, sent.Add(spentSweepEvery).UnixNano()) {
		s.m.Range(func(k, v any) bool {
			if !sent.Before(v.(*spentRate).until) {
				s.m.CompareAndDelete(k, v)
			}
			return true
		})
	}
}

// spent reports whether key's rate is known to refuse a request at now,
// with the result such a refusal reports.
func (s *spentRates) spent(key string, rate Rate, now time.Time) (RateResult, bool) {
	v, ok := s.m.Load(key)
	if !ok {
		return RateResult{}, false
	}
	e := v.(*spentRate)
	if !now.Before(e.until) {
		s.m.CompareAndDelete(key, v)
		return RateResult{}, false
	}
	if e.rate != rate {
		return RateResult{}, false
	}
	return RateResult{Limit: rate.Limit, RetryAfter: e.until.Sub(now), ResetAfter: max(e.reset.Sub(now), 0)}, true
}

// clock is the node's time: the injected clock, else time.Now.
func (r *Redis) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// Precheck implements Prechecker without a round trip: it refuses what
// the node already knows Redis would refuse. That is a ledger balance,
// as the key lookup read it, below the minimum; and a rate that Redis's
// answer to one of this node's own admissions of the key showed spent,
// until the time that answer said a request would be admitted again.
// What other nodes spent since, and what the account's requests in
// flight hold, only Admit can tell.
func (r *Redis) Precheck(req AdmitRequest) (Admission, error) {
	if err := ledgerShort(req.Reserve); err != nil {
		return Admission{}, err
	}
	if !req.Rate.Enabled() {
		return Admission{}, nil
	}
	if res, ok := r.spent.spent(req.Key, req.Rate, r.clock()); ok {
		return Admission{Rate: res}, newRateError(req.Rate, res)
	}
	return Admission{}, nil
}
