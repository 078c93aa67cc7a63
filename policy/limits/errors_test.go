package limits

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAPIError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter int
		messageHas string
	}{
		{
			name:   "rolling rate",
			err:    &LimitError{Limit: LimitRequests, Max: 150, Period: time.Minute, Rolling: true, RetryAfter: 400 * time.Millisecond},
			status: 429, code: "rate_limit_exceeded", retryAfter: 1,
			messageHas: "at most 150 requests in any rolling 1m0s for this API key. Please try again in 400ms",
		},
		{
			name:   "per-minute rate",
			err:    fmt.Errorf("admit: %w", &LimitError{Limit: LimitRequests, Max: 60, Period: time.Minute, RetryAfter: 2500 * time.Millisecond}),
			status: 429, code: "rate_limit_exceeded", retryAfter: 3,
			messageHas: "at most 60 requests per 1m0s",
		},
		{
			name:   "streams",
			err:    &LimitError{Limit: LimitStreams, Max: 5},
			status: 429, code: "rate_limit_exceeded", retryAfter: 1,
			messageHas: "Concurrency limit reached: at most 5 streams",
		},
		{
			name:   "unavailable",
			err:    &UnavailableError{Limit: LimitStreams, Err: errors.New("dial tcp: refused")},
			status: 503, code: "service_unavailable", retryAfter: 1,
		},
		{
			name:   "queue full",
			err:    &QueueError{Full: true},
			status: 503, code: "server_overloaded", retryAfter: 1,
		},
		{
			name:   "anything else",
			err:    context.DeadlineExceeded,
			status: 500, code: "internal_error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := APIError(tt.err)
			if e.Status != tt.status || e.Code != tt.code || e.RetryAfter != tt.retryAfter {
				t.Fatalf("APIError = %+v, want status %d code %s retry %d", e, tt.status, tt.code, tt.retryAfter)
			}
			if !strings.Contains(e.Message, tt.messageHas) {
				t.Fatalf("message %q lacks %q", e.Message, tt.messageHas)
			}
			if strings.Contains(e.Message, "refused") {
				t.Fatalf("message %q leaks Redis details", e.Message)
			}
		})
	}
}
