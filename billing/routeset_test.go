package billing

import (
	"net/http"
	"testing"
)

func TestRouteSet(t *testing.T) {
	s := NewRouteSet("/v3/chat/completions", "/v3/responses")
	before := s.Load()
	if got := before.BodyMeter(http.MethodPost, "/v3/files"); got != V1JSON {
		t.Fatalf("an unregistered upload path is metered %v, want V1JSON", got)
	}
	s.AddUpload("/v3/files")
	s.AddResponses("/v1/responses")
	rt := s.Load()
	if got := rt.BodyMeter(http.MethodPost, "/v3/files"); got != Upload {
		t.Errorf("upload path metered %v", got)
	}
	if got := rt.BodyMeter(http.MethodPost, "/v1/responses"); got != V1Responses {
		t.Errorf("responses path metered %v", got)
	}
	if got := rt.BodyMeter(http.MethodPost, "/v3/chat/completions"); got != ChatJSON {
		t.Errorf("chat path metered %v", got)
	}
	// What a request already loaded does not change under it.
	if len(before.Uploads) != 0 || len(before.Responses) != 0 {
		t.Errorf("an earlier load changed: %+v", before)
	}
}
