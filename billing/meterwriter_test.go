package billing

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A 2xx answer is metered and tells its headers once; an error answer
// passes as it is, unmetered.
func TestMeterWriter(t *testing.T) {
	const answer = `{"id":"c","usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}}`
	for _, tt := range []struct {
		status     int
		wantTold   int
		wantTokens int64
	}{{http.StatusOK, 1, 7}, {http.StatusTooManyRequests, 0, 0}} {
		rec := httptest.NewRecorder()
		told := 0
		w := NewMeterWriter(rec, NewMeter(false), func() { told++ })
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(tt.status)
		w.WriteHeader(http.StatusInternalServerError) // ignored: the status is sent
		_, _ = w.Write([]byte(answer))
		w.FlushRest()
		if w.Status() != tt.status || told != tt.wantTold {
			t.Errorf("%d: status %d, headers told %d times; want %d, %d", tt.status, w.Status(), told, tt.status, tt.wantTold)
		}
		if got := w.Meter.Usage().Prompt; got != tt.wantTokens {
			t.Errorf("%d: metered %d prompt tokens, want %d", tt.status, got, tt.wantTokens)
		}
		if rec.Body.String() != answer {
			t.Errorf("%d: the client got %q", tt.status, rec.Body.String())
		}
	}
}
