package limits

import (
	"errors"
	"fmt"
	"github.com/switchyardhq/switchyard/internal/humantime"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Which limit refused a request.
const (
	LimitRequests = "requests" // the request rate
	LimitStreams  = "streams"  // concurrent streams
)

// LimitError is a request refused by a limit. The handler answers it with
// 429 rate_limit_exceeded (see APIError).
type LimitError struct {
	// Limit is LimitRequests or LimitStreams.
	Limit string
	// Max is the limit's value: requests per Period, or streams at once.
	Max int
	// Period is the rate's period; zero for LimitStreams.
	Period time.Duration
	// Rolling is the rate's Rolling flag.
	Rolling bool
	// RetryAfter is when a retry may succeed; zero when unknown, as for a
	// stream slot, which frees when another stream ends.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	if e.Limit == LimitStreams {
		return fmt.Sprintf("concurrency limit reached: %d streams at once", e.Max)
	}
	return fmt.Sprintf("rate limit reached: %d requests per %s", e.Max, humantime.Duration(e.Period))
}

// APIError is the client-visible form of e: 429 rate_limit_exceeded, with
// a message that says which limit was hit.
func (e *LimitError) APIError() *apierror.Error {
	if e.Limit == LimitStreams {
		return apierror.RateLimited(fmt.Sprintf(
			"Concurrency limit reached: at most %d streams may be open at once for this API key. "+
				"Retry when one of them has finished.", e.Max), 1)
	}
	window := "per " + FormatDuration(e.Period)
	if e.Rolling {
		window = "in any rolling " + FormatDuration(e.Period)
	}
	return apierror.RateLimited(fmt.Sprintf(
		"Rate limit reached for requests: at most %d requests %s for this API key. Please try again in %s.",
		e.Max, window, FormatDuration(e.RetryAfter)), retrySeconds(e.RetryAfter))
}

func newRateError(r Rate, res RateResult) *LimitError {
	return &LimitError{Limit: LimitRequests, Max: r.Limit, Period: r.Period, Rolling: r.Rolling, RetryAfter: res.RetryAfter}
}

func newStreamError(limit int) *LimitError {
	return &LimitError{Limit: LimitStreams, Max: limit}
}

// ErrUnavailable is matched (errors.Is) by every *UnavailableError.
var ErrUnavailable = errors.New("limits unavailable")

// UnavailableError means a limit could not be checked because Redis did
// not answer and the limit's policy is FailClosed. The handler answers it
// with 503 (see APIError).
type UnavailableError struct {
	Limit string // LimitRequests or LimitStreams
	Err   error  // what went wrong with Redis
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%s limit unavailable: %v", e.Limit, e.Err)
}

func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// APIError is 503 service_unavailable; Redis details stay in the logs.
func (e *UnavailableError) APIError() *apierror.Error {
	a := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "service_unavailable",
		"Limits cannot be checked right now. Retry with backoff.")
	a.RetryAfter = 1
	return a
}

// QueueError is a request the admission queue could not place: the queue
// was full, or the request waited longer than the queue allows. The
// handler answers it with 503 (see APIError).
type QueueError struct {
	Full   bool          // true: the queue was full; false: the wait timed out
	Waited time.Duration // how long the request waited
}

func (e *QueueError) Error() string {
	if e.Full {
		return "admission queue full"
	}
	return fmt.Sprintf("admission queue wait exceeded after %s", e.Waited)
}

// APIError is 503 server_overloaded.
func (e *QueueError) APIError() *apierror.Error {
	a := apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "server_overloaded",
		"The service is saturated right now. Retry with backoff.")
	a.RetryAfter = 1
	return a
}

// APIError maps any error from this package to its client-visible form:
// *LimitError to 429 rate_limit_exceeded, *UnavailableError to 503
// service_unavailable, *QueueError to 503 server_overloaded,
// *BalanceError to 402 insufficient_balance. Anything
// else, including a context error, goes through apierror.From.
func APIError(err error) *apierror.Error {
	var le *LimitError
	if errors.As(err, &le) {
		return le.APIError()
	}
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return ue.APIError()
	}
	var qe *QueueError
	if errors.As(err, &qe) {
		return qe.APIError()
	}
	var be *BalanceError
	if errors.As(err, &be) {
		return be.APIError()
	}
	return apierror.From(err)
}

// retrySeconds is d in whole seconds for Retry-After, rounded up, at
// least 1 so that a client never retries at once.
func retrySeconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

// BalanceError is a request refused because its account's available
// balance, its balance minus what its requests in flight hold, does not
// cover the minimum charge. The handler answers it with 402
// insufficient_balance (see APIError).
type BalanceError struct {
	// Available is the balance minus the holds, in cents; it may be
	// negative.
	Available int64
	// Min is what the request needed available.
	Min int64
}

func (e *BalanceError) Error() string {
	return fmt.Sprintf("insufficient balance: %d cents available, %d needed", e.Available, e.Min)
}

// APIError is 402 insufficient_balance.
func (e *BalanceError) APIError() *apierror.Error {
	return apierror.InsufficientBalance(fmt.Sprintf(
		"Your available balance of %s does not cover a request. Top up to continue.", formatCents(e.Available)))
}

func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s$%d.%02d", sign, c/100, c%100)
}
