package request

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
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
		{"non-ASCII case-variant", `{"model":"m","ÉTÉ":1,"été":2,` + msgs + `}`, CodeInvalidJSON, 0},
		{"case-variant past many members", `{"model":"m",` + manyMembers(40) + `,"Stream":false,"stream":true,` + msgs + `}`, CodeInvalidJSON, 0},
		{"many members", `{"model":"m",` + manyMembers(40) + `,"stream":true,` + msgs + `}`, "", 0},
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

// manyMembers is n members of an object, "x0":0 and on, without braces.
func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%d":%d`, i, i)
	}
	return b.String()
}

// Long keys, with escapes or not, cost a parse about as much as the body
// they are in: a key is decoded only when its length could be the name
// looked for, and the keys' letter cases are compared in place only when
// they are short, as a request's are.
func TestLongKeysAreReadOnce(t *testing.T) {
	long := strings.Repeat("k", 256<<10)
	var b strings.Builder
	b.WriteString(`{"model":"m","messages":[{"role":"user","content":"hi"}]`)
	for i := range 15 { // 32 members: kept in a list
		fmt.Fprintf(&b, `,"%s\u00e9%d":%d,"%s%d":%d`, long, i, i, long, i, i)
	}
	b.WriteString(`}`)
	body := []byte(b.String())
	lim := Limits{Profile: policy.ProfileFor(policy.RevisionB), Strict: true}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Parse(body, http.Header{}, lim); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(body)) {
		t.Errorf("parsing a body of %d bytes allocated %d", len(body), got)
	}
}
