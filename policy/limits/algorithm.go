package limits

import "time"

// rateState is one key's rate state in process. Times are nanoseconds on
// the limiter's own time line (see Local.nanos). A key is used with one
// kind of Rate: tat serves GCRA, log serves the rolling window.
type rateState struct {
	tat    int64   // GCRA theoretical arrival time; 0 before the first request
	log    []int64 // rolling window: admission times, oldest first, from head
	head   int
	window int64 // rolling window length last used, for idle
}

// decision is a rate check computed but not yet applied, so that a
// request refused by another limit can leave the rate budget untouched.
type decision struct {
	res    RateResult
	newTAT int64
}

// decide checks one request at now against r without counting it.
//
// GCRA, as in redis_rate: with emission interval T = Period/Limit and
// burst B, a request is admitted when, after adding T to the theoretical
// arrival time TAT (never earlier than now), TAT - B*T <= now.
func (s *rateState) decide(now int64, r Rate) decision {
	if !r.Enabled() {
		return decision{res: RateResult{Allowed: true}}
	}
	if r.Rolling {
		return s.decideRolling(now, r)
	}
	t := max(int64(r.interval()), 1)
	b := int64(r.burst())
	tat := max(s.tat, now)
	newTAT := tat + t
	diff := now - (newTAT - b*t)
	if diff < 0 {
		return decision{res: RateResult{
			Limit:      r.Limit,
			RetryAfter: time.Duration(-diff),
			ResetAfter: time.Duration(tat - now),
		}}
	}
	return decision{
		res: RateResult{
			Allowed:    true,
			Limit:      r.Limit,
			Remaining:  int(diff / t),
			ResetAfter: time.Duration(newTAT - now),
		},
		newTAT: newTAT,
	}
}

func (s *rateState) decideRolling(now int64, r Rate) decision {
	s.window = int64(r.Period)
	s.expire(now, s.window)
	n := len(s.log) - s.head
	period := int64(r.Period)
	if n >= r.Limit {
		return decision{res: RateResult{
			Limit:      r.Limit,
			RetryAfter: time.Duration(s.log[s.head] + period - now),
			ResetAfter: time.Duration(s.log[len(s.log)-1] + period - now),
		}}
	}
	return decision{res: RateResult{
		Allowed:    true,
		Limit:      r.Limit,
		Remaining:  r.Limit - n - 1,
		ResetAfter: r.Period,
	}}
}

// commit counts an admitted decision.
func (s *rateState) commit(now int64, r Rate, d decision) {
	if !d.res.Allowed || !r.Enabled() {
		return
	}
	if r.Rolling {
		s.log = append(s.log, now)
		return
	}
	s.tat = d.newTAT
}

// uncounted turns an admitted decision into the result of a request that
// was refused by another limit: the request is not counted, so Remaining
// and ResetAfter are what they were before it.
func (s *rateState) uncounted(now int64, r Rate, d decision) RateResult {
	res := d.res
	if !res.Allowed || !r.Enabled() {
		res.Allowed = false
		return res
	}
	res.Allowed = false
	res.Remaining++
	if r.Rolling {
		res.ResetAfter = 0
		if n := len(s.log); n > s.head {
			res.ResetAfter = time.Duration(s.log[n-1] + int64(r.Period) - now)
		}
		return res
	}
	res.ResetAfter = time.Duration(max(s.tat-now, 0))
	return res
}

// expire drops admissions that left the window (now-period, now].
func (s *rateState) expire(now, period int64) {
	for s.head < len(s.log) && s.log[s.head] <= now-period {
		s.head++
	}
	switch {
	case s.head == len(s.log):
		s.log, s.head = s.log[:0], 0
	case s.head >= 32 && s.head*2 >= len(s.log):
		n := copy(s.log, s.log[s.head:])
		s.log, s.head = s.log[:n], 0
	}
}

// idle reports whether the state holds nothing a later request could
// observe, so that its entry may be dropped.
func (s *rateState) idle(now int64) bool {
	if s.tat > now {
		return false
	}
	n := len(s.log)
	return n == s.head || s.log[n-1] <= now-s.window
}
