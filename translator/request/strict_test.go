package request

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
)

// TestStrictReadsAsTheProbe pins that Limits.Strict refuses what the /v1
// probe refuses, so that one parse can serve admission and the handler.
func TestStrictReadsAsTheProbe(t *testing.T) {
	strict := Limits{Profile: policy.ProfileFor(policy.RevisionB), Strict: true}
	lenient := Limits{Profile: strict.Profile}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, body string
		wantCode   string // empty: valid when strict
		wantMax    int64
	}{
		{"case-variant stream", `{"model":"m","stream":true,"Stream":false,` + msgs + `}`, CodeInvalidJSON, 0},
		{"exact repeat", `{"model":"a","model":"b",` + msgs + `}`, CodeInvalidJSON, 0},
		{"escaped repeat", `{"model":"a","mod\u0065l":"b",` + msgs + `}`, CodeInvalidJSON, 0},
		{"max_completion_tokens first", `{"model":"m","max_tokens":9,"max_completion_tokens":7,` + msgs + `}`, "", 7},
		{"max_tokens", `{"model":"m","max_tokens":9,` + msgs + `}`, "", 9},
		{"null max_tokens", `{"model":"m","max_tokens":null,` + msgs + `}`, "", 0},
		{"negative max_tokens", `{"model":"m","max_tokens":-1,` + msgs + `}`, CodeInvalidParameter, 0},
		{"string max_tokens", `{"model":"m","max_tokens":"9",` + msgs + `}`, CodeInvalidParameter, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse([]byte(tc.body), http.Header{}, strict)
			if tc.wantCode != "" {
				var ae *apierror.Error
				if !errors.As(err, &ae) || ae.Code != tc.wantCode {
					t.Fatalf("strict: err %v, want code %s", err, tc.wantCode)
				}
			} else {
				if err != nil {
					t.Fatalf("strict: %v", err)
				}
				if req.MaxTokens != tc.wantMax {
					t.Errorf("MaxTokens %d, want %d", req.MaxTokens, tc.wantMax)
				}
			}
			// Without Strict the same bodies are read as before: repeats
			// keep the last value and token bounds are not looked at.
			if req, err := Parse([]byte(tc.body), http.Header{}, lenient); err != nil {
				t.Errorf("lenient: %v", err)
			} else if req.MaxTokens != 0 {
				t.Errorf("lenient MaxTokens %d, want 0", req.MaxTokens)
			}
		})
	}
}
