// Package limits enforces per-key request rates and concurrent-stream
// limits, in process on one node (Local) or in Redis across many nodes
// (Redis), plus an admission queue that caps requests in flight (Queue).
// It is plain Go; the HTTP handler on top maps its errors with APIError
// and its results with SetHeaders. Config is the limits block of the
// gateway's config: its overrides of the revision's profile (Apply), its
// checks (Validate), defaults, and the options the Caddyfile sets
// (SetOption).
//
// # Rates: GCRA
//
// A Rate with Rolling false is enforced with the generic cell rate
// algorithm, as github.com/go-redis/redis_rate does. With Limit L per
// Period P the emission interval is T = P/L; with burst B the key keeps
// one number, its theoretical arrival time TAT. A request at time t is
// admitted when
//
//	max(TAT, t) + T - B*T <= t
//
// and then TAT becomes max(TAT, t) + T. A refused request changes
// nothing. From the same numbers, with TAT as it stands after the
// request: Remaining = floor((t - (TAT - B*T)) / T), ResetAfter = TAT - t,
// the time until the full burst is available again, and for a refused
// request RetryAfter = TAT + T - B*T - t.
//
// GCRA bounds the rate, not the count in a window: in any window of
// length W it admits at most B + W/T requests. With B = L and W = P that
// is 2L, as a client may spend the whole burst and then keep pace for a
// whole period (2L-1 in a half-open window). With B = 1 it admits at most
// L per window, but no two requests closer than T.
//
// # Rates: rolling window
//
// A Rate with Rolling true admits a request when fewer than Limit were
// admitted in the window (t - Period, t]. The key keeps the times of the
// admissions still in the window (a sliding log), so the count is exact:
// never more than Limit in any window of length Period. RetryAfter is the
// time until the oldest admission leaves the window; ResetAfter the time
// until the newest does.
//
// # The spec's limits
//
// RateFor maps a policy.Profile. Both revisions promise a count per
// minute, so both get the rolling window by default:
//
//   - Revision A, "150 per rolling 60 seconds": Rolling, Limit 150, Period
//     1m. GCRA with B = 150 and T = 400ms would let 299 requests into one
//     60-second window (150 at once, then one every 400ms), breaking the
//     promise; GCRA with B = 1 would keep it but refuse any two requests
//     sent within 400ms of each other. The sliding log keeps the promise
//     and allows all 150 at once.
//   - Revision B, "60 per minute": Rolling, Limit 60, Period 1m. Never
//     more than 60 in any 60-second window; all 60 may come at once. GCRA
//     with B = 60 and T = 1s, which a profile still selects with Rolling
//     false ("rate" in the Caddyfile), would admit 119 in one window: 60
//     at once, then one a second as the bucket refills.
//
// # Headers
//
// SetHeaders writes OpenAI's request headers from a RateResult:
// x-ratelimit-limit-requests is Limit, x-ratelimit-remaining-requests is
// Remaining, and x-ratelimit-reset-requests is ResetAfter in OpenAI's
// duration format (FormatDuration: "400ms", "1s", "59.6s", "6m0s"). A 429
// also carries Retry-After, RetryAfter in whole seconds rounded up.
//
// # Concurrency and Admit
//
// A Lease holds one of a key's stream slots until it is released or the
// context it was taken with is done. Admit checks a rate and takes a lease
// in one atomic step (one lock in process, one script in Redis): a request
// refused by the rate takes no lease, and one refused for lack of a slot
// spends no rate budget.
//
// # Reservations
//
// An AdmitRequest with a Reservation also holds money against an account's
// balance, checked first and in the same step: the account's mirrored
// balance less the holds of its requests in flight must cover
// Reservation.Min, else Admit returns a *BalanceError and consumes no rate
// or slot. The Hold is settled with the request's charge, which frees it
// and lowers the mirror; it expires when its holder stops renewing it.
//
// docs/limits.md describes the Redis keys and scripts, the failure
// policies, the circuit breaker and the bounds that hold across nodes.
package limits
