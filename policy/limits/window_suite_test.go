package limits

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
)

// arrival is a request sent offset after the start of a scenario.
type arrival struct {
	offset time.Duration
	n      int // requests sent at once; 0 is one
}

// arrivals repeats one request every step from start to end inclusive.
func arrivals(start, step, end time.Duration) []arrival {
	var out []arrival
	for at := start; at <= end; at += step {
		out = append(out, arrival{offset: at})
	}
	return out
}

// windowCase is a sequence of requests against revision B's default
// rate, 60 in any rolling 60 seconds.
type windowCase struct {
	name         string
	arrivals     []arrival // in order of offset
	wantAdmitted int       // -1: whatever the window allows
}

func windowCases() []windowCase {
	counterexample := append([]arrival{{offset: 0, n: 60}}, arrivals(time.Second, time.Second, time.Minute)...)
	rng := rand.New(rand.NewPCG(3, 4))
	var bursts []arrival
	at := time.Duration(0)
	for range 80 {
		at += time.Duration(rng.IntN(3000)) * time.Millisecond
		bursts = append(bursts, arrival{offset: at, n: 1 + rng.IntN(10)})
	}
	return []windowCase{
		{
			// 60 at once, then one a second: GCRA with a burst of 60
			// admits all 119 sent before 60s.
			name:         "GCRA counterexample",
			arrivals:     counterexample,
			wantAdmitted: 61, // 60 at 0s, then the one at 60s
		},
		{
			name: "bursts at the start and end of a window",
			arrivals: []arrival{
				{offset: 0, n: 100}, {offset: 30 * time.Second, n: 10},
				{offset: 59999 * time.Millisecond, n: 5}, {offset: time.Minute, n: 70},
			},
			wantAdmitted: 120, // 60 at 0s, 60 at 60s
		},
		{
			// Twice the allowed pace: two runs of 60 admitted, 30s
			// refused after each.
			name:         "steady trickle",
			arrivals:     arrivals(0, 500*time.Millisecond, 150*time.Second),
			wantAdmitted: 180,
		},
		{
			name: "edge of the window",
			arrivals: []arrival{
				{offset: 0, n: 30}, {offset: 59999 * time.Millisecond, n: 31},
				// One microsecond before the first 30 leave: still full.
				{offset: time.Minute - time.Microsecond},
				{offset: time.Minute, n: 31}, {offset: 119999 * time.Millisecond, n: 30},
			},
			wantAdmitted: 120, // 30 slots free at 60s, 30 more at 119.999s
		},
		{
			name:         "random bursts",
			arrivals:     bursts,
			wantAdmitted: -1,
		},
	}
}

// testRollingPromise drives revision B's rate through request sequences
// and holds every answer to the promise of a sliding window: a request is
// admitted exactly when fewer than 60 were admitted in the 60 seconds
// before it, and a refusal says when the oldest of those leaves. Half of
// the requests go through Allow and half through Admit with a stream
// lease, so both paths (one script run each in Redis) keep the promise.
func testRollingPromise(t *testing.T, h harness) {
	l := h.node(t)
	r := RateFor(policy.ProfileFor(policy.RevisionB))
	if !r.Rolling {
		t.Fatalf("revision B rate %+v is not a rolling window", r)
	}
	for _, tc := range windowCases() {
		t.Run(tc.name, func(t *testing.T) {
			start := h.clock.Now()
			var admitted []time.Duration // offsets, in order
			seq := 0
			for _, a := range tc.arrivals {
				h.clock.Advance(start.Add(a.offset).Sub(h.clock.Now()))
				for range max(a.n, 1) {
					seq++
					res, retryHeader := ask(t, l, tc.name, r, seq%2 == 0)
					what := fmt.Sprintf("request %d at %s", seq, a.offset)
					inWindow := admittedSince(admitted, a.offset-r.Period)
					checkWindowAnswer(t, what, r, a.offset, inWindow, res, retryHeader)
					if res.Allowed {
						admitted = append(admitted, a.offset)
					}
				}
			}
			if tc.wantAdmitted >= 0 && len(admitted) != tc.wantAdmitted {
				t.Errorf("admitted %d, want %d", len(admitted), tc.wantAdmitted)
			}
			if len(admitted) == seq {
				t.Errorf("all %d requests admitted: the sequence never reached the limit", seq)
			}
			// The promise itself, for every window [t, t+60s): the 61st
			// admission after any admission is at least 60s later.
			for i := range admitted {
				if j := i + r.Limit; j < len(admitted) && admitted[j]-admitted[i] < r.Period {
					t.Fatalf("%d admitted within %s (from %s to %s)", r.Limit+1, admitted[j]-admitted[i], admitted[i], admitted[j])
				}
			}
		})
	}
}

// admittedSince returns the admissions after from: those still in the
// window (from, now].
func admittedSince(admitted []time.Duration, from time.Duration) []time.Duration {
	for i, at := range admitted {
		if at > from {
			return admitted[i:]
		}
	}
	return nil
}

// ask sends one request, through Admit with a stream lease (released at
// once) or through Allow, and returns the rate result and, for a refusal
// by the rate, the Retry-After header the client would get.
func ask(t *testing.T, l Limiter, key string, r Rate, viaAdmit bool) (RateResult, int) {
	t.Helper()
	if !viaAdmit {
		res := allow(t, l, key, r)
		retry := 0
		if !res.Allowed {
			retry = APIError(newRateError(r, res)).RetryAfter
		}
		return res, retry
	}
	a, err := l.Admit(context.Background(), AdmitRequest{Key: key, Rate: r, StreamLimit: 1 << 20, WantLease: true})
	a.Lease.Release()
	if err == nil {
		if a.Lease == nil || !a.Rate.Allowed {
			t.Fatalf("Admit: no error but %+v", a)
		}
		return a.Rate, 0
	}
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Limit != LimitRequests || le.Max != r.Limit || !le.Rolling {
		t.Fatalf("Admit: %v, want a rolling requests LimitError", err)
	}
	return a.Rate, APIError(err).RetryAfter
}

// checkWindowAnswer holds the answer to a request at offset against the
// admissions in the window before it.
func checkWindowAnswer(t *testing.T, what string, r Rate, offset time.Duration, inWindow []time.Duration, res RateResult, retryHeader int) {
	t.Helper()
	hdr := http.Header{}
	SetHeaders(hdr, res)
	if res.Limit != r.Limit || hdr.Get(HeaderLimitRequests) != strconv.Itoa(r.Limit) {
		t.Fatalf("%s: limit %d, header %q", what, res.Limit, hdr.Get(HeaderLimitRequests))
	}
	n := len(inWindow)
	if n < r.Limit {
		if !res.Allowed || res.Remaining != r.Limit-n-1 || !near(res.ResetAfter, r.Period) || res.RetryAfter != 0 {
			t.Fatalf("%s: %+v; want admitted with %d remaining, reset after %s (%d in the window)",
				what, res, r.Limit-n-1, r.Period, n)
		}
		if hdr.Get(HeaderRemainingRequests) != strconv.Itoa(r.Limit-n-1) || hdr.Get(HeaderResetRequests) != "1m0s" {
			t.Fatalf("%s: headers %v", what, hdr)
		}
		return
	}
	retry := inWindow[0] + r.Period - offset
	reset := inWindow[n-1] + r.Period - offset
	if res.Allowed || res.Remaining != 0 || !near(res.RetryAfter, retry) || !near(res.ResetAfter, reset) {
		t.Fatalf("%s: %+v; want refused with retry after %s, reset after %s (%d in the window)",
			what, res, retry, reset, n)
	}
	if want := retrySeconds(retry); retryHeader != want {
		t.Fatalf("%s: Retry-After %d, want %d (retry after %s)", what, retryHeader, want, retry)
	}
	if hdr.Get(HeaderRemainingRequests) != "0" || hdr.Get(HeaderResetRequests) != FormatDuration(reset) {
		t.Fatalf("%s: headers %v, want 0 remaining, reset %s", what, hdr, FormatDuration(reset))
	}
}

// testRateOptionAdmitsMore runs the counterexample against revision B's
// limit enforced as a rate ("requests 60 1m rate"), to pin what an
// operator who picks it allows: 119 requests within 60 seconds.
func testRateOptionAdmitsMore(t *testing.T, h harness) {
	l := h.node(t)
	p := policy.ProfileFor(policy.RevisionB)
	p.Rolling = false
	r := RateFor(p)
	inFirstMinute := 0
	for i := range 60 {
		if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 59-i {
			t.Fatalf("burst request %d: %+v", i+1, res)
		}
		inFirstMinute++
	}
	for s := 1; s < 60; s++ {
		h.clock.Advance(time.Second)
		res := allow(t, l, "k", r)
		if !res.Allowed || res.Remaining != 0 || !near(res.ResetAfter, time.Minute) {
			t.Fatalf("paced request at %ds: %+v, want admitted as the bucket refills", s, res)
		}
		inFirstMinute++
		if res := allow(t, l, "k", r); res.Allowed || !near(res.RetryAfter, time.Second) {
			t.Fatalf("second request at %ds: %+v, want refused for 1s", s, res)
		}
	}
	if inFirstMinute != 2*r.Limit-1 {
		t.Fatalf("%d admitted within 60s, want %d", inFirstMinute, 2*r.Limit-1)
	}
}
