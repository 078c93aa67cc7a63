package request

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// parseCase is one row of a parser's table: a body and its headers, and
// either the refusal it must get or a check of the request it reads.
type parseCase struct {
	name     string
	body     string
	headers  map[string]string
	limits   *Limits // default: the table's
	wantCode string  // empty: valid
	// wantMessage, when set, pins the refusal's message word for word.
	wantMessage string
	check       func(t *testing.T, r *Request)
}

// runParseCases runs each case through parse: a valid body must be read
// and pass its check, any other must be refused with the spec's 400
// invalid_request_error, its code and a message, and no request.
func runParseCases(t *testing.T, parse func([]byte, http.Header, Limits) (*Request, error), lim Limits, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lim := lim
			if tc.limits != nil {
				lim = *tc.limits
			}
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			req, err := parse([]byte(tc.body), h, lim)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.check != nil {
					tc.check(t, req)
				}
				return
			}
			var ae *apierror.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T), want *apierror.Error with code %s", err, err, tc.wantCode)
			}
			if ae.Code != tc.wantCode || ae.Status != http.StatusBadRequest || ae.Type != apierror.TypeInvalidRequest {
				t.Errorf("got %d %s %s (%s), want 400 invalid_request_error %s", ae.Status, ae.Type, ae.Code, ae.Message, tc.wantCode)
			}
			if ae.Message == "" {
				t.Errorf("empty message")
			}
			if tc.wantMessage != "" && ae.Message != tc.wantMessage {
				t.Errorf("message %q, want %q", ae.Message, tc.wantMessage)
			}
			if req != nil {
				t.Errorf("a refused body returned a request: %+v", req)
			}
		})
	}
}
