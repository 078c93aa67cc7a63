package request

import (
	"errors"
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// A boolean member is read as json.Unmarshal reads it: the literals,
// whatever the spaces around them, null as absent, anything else refused.
func TestBooleanMembers(t *testing.T) {
	for _, c := range []struct {
		stream   string
		want     bool
		wantCode string
	}{
		{stream: `true`, want: true},
		{stream: ` true `, want: true},
		{stream: "\n\tfalse", want: false},
		{stream: `null`, want: false},
		{stream: `1`, wantCode: CodeInvalidType},
		{stream: `"true"`, wantCode: CodeInvalidType},
		{stream: `[true]`, wantCode: CodeInvalidType},
	} {
		body := `{"model":"m","stream":` + c.stream + `,"messages":[{"role":"user","content":"hi"}]}`
		req, err := Parse([]byte(body), http.Header{}, Limits{Strict: true})
		if c.wantCode != "" {
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Code != c.wantCode {
				t.Errorf("stream %s: error %v, want code %s", c.stream, err, c.wantCode)
			}
			continue
		}
		if err != nil {
			t.Errorf("stream %s: %v", c.stream, err)
			continue
		}
		if req.Stream != c.want {
			t.Errorf("stream %s: read %v, want %v", c.stream, req.Stream, c.want)
		}
	}
}
