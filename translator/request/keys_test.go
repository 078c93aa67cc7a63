package request

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
)

// TestKeysAreExact pins that member names match exactly, as the spec
// spells them: a name that differs only in case is an unknown field and
// is ignored, and a repeated name keeps its last value.
func TestKeysAreExact(t *testing.T) {
	lim := Limits{Profile: policy.ProfileFor(policy.RevisionB)}
	cases := []struct {
		name     string
		body     string
		wantCode string // empty: valid
		check    func(t *testing.T, r *Request)
	}{
		{name: "capitalised model is not model", body: `{"Model":"m","messages":[{"role":"user","content":"hi"}]}`, wantCode: CodeMissingParameter},
		{name: "capitalised stream is ignored", body: `{"model":"m","Stream":"yes","STREAM":true,"messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Stream {
					t.Errorf("Stream or STREAM set stream")
				}
			}},
		{name: "capitalised role is not role", body: `{"model":"m","messages":[{"Role":"user","content":"hi"}]}`, wantCode: CodeMissingParameter},
		{name: "capitalised part type is not type", body: userWith(`[{"Type":"text","text":"a"}]`), wantCode: CodeMissingParameter},
		{name: "escaped key is the same key", body: `{"mod\u0065l":"m","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Model != "m" {
					t.Errorf("model %q", r.Model)
				}
			}},
		{name: "repeated key keeps the last value", body: `{"model":"a","model":"b","messages":[{"role":"user","content":"hi"}]}`,
			check: func(t *testing.T, r *Request) {
				if r.Model != "b" {
					t.Errorf("model %q, want the last one", r.Model)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Parse([]byte(tc.body), http.Header{}, lim)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				tc.check(t, req)
				return
			}
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Code != tc.wantCode {
				t.Fatalf("got %v, want code %s", err, tc.wantCode)
			}
		})
	}
}
