package apierror

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type codeRecorder struct {
	http.ResponseWriter
	codes []string
}

func (r *codeRecorder) RecordErrorCode(code string) { r.codes = append(r.codes, code) }

type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Write tells the code to a recorder below the writers that wrap it.
func TestWriteRecordsTheCode(t *testing.T) {
	rec := &codeRecorder{ResponseWriter: httptest.NewRecorder()}
	Write(wrapper{wrapper{rec}}, New(http.StatusPaymentRequired, TypeInvalidRequest, "insufficient_balance", "Top up."))
	if len(rec.codes) != 1 || rec.codes[0] != "insufficient_balance" {
		t.Errorf("recorded %q, want [insufficient_balance]", rec.codes)
	}
	// A writer that hides what it wraps hides the recorder too.
	hidden := &codeRecorder{ResponseWriter: httptest.NewRecorder()}
	Write(struct{ http.ResponseWriter }{hidden}, Internal())
	if len(hidden.codes) != 0 {
		t.Errorf("recorded %q through a writer without Unwrap", hidden.codes)
	}
}
