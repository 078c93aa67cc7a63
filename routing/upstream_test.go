package routing

import (
	"io"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The request a pool sends is the upstream's: its base path, Host and
// key in place of the caller's, and the body with its model name.
func TestUpstreamOutgoing(t *testing.T) {
	up, err := ParseUpstream("alpha", "https://api.example:8443/openai/v1", "sk-up", "org/alpha", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/chat/completions", strings.NewReader(`{"model":"alpha"}`))
	req.Header.Set("Authorization", "Bearer caller")
	out, state, err := up.Outgoing(req)
	if err != nil || state != nil {
		t.Fatalf("without a state: %v, %v", state, err)
	}
	// reverse_proxy has set the URL's host to the dial address already.
	if out.URL.Scheme != "https" || out.URL.Path != "/openai/v1/chat/completions" || out.Host != "api.example:8443" ||
		out.Header.Get("Authorization") != "Bearer sk-up" || req.Header.Get("Authorization") != "Bearer caller" {
		t.Errorf("outgoing %s (Host %s, %q); the caller's header now %q", out.URL, out.Host, out.Header.Get("Authorization"), req.Header.Get("Authorization"))
	}

	s := NewState([]byte(`{"model":"alpha"}`), "alpha")
	req = httptest.NewRequest("POST", "/chat/completions", strings.NewReader(`{"model":"alpha"}`))
	out, state, err = up.Outgoing(req.WithContext(WithState(req.Context(), s)))
	if err != nil || state != s {
		t.Fatalf("with a state: %v, %v", state, err)
	}
	body, _ := io.ReadAll(out.Body)
	if string(body) != `{"model":"org/alpha"}` || out.ContentLength != int64(len(body)) ||
		out.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("body %s, length %d, header %q", body, out.ContentLength, out.Header.Values("Content-Length"))
	}
	// The other headers are the caller's, in a copy of their own.
	req.Header["Accept"] = []string{"text/event-stream", "application/json"}
	req.Header["X-Empty"] = nil
	out, _, _ = up.Outgoing(req)
	out.Header["Accept"][0] = "changed"
	if v, ok := out.Header["X-Empty"]; !ok || v != nil ||
		!slices.Equal(req.Header["Accept"], []string{"text/event-stream", "application/json"}) ||
		!slices.Equal(out.Header["Accept"], []string{"changed", "application/json"}) {
		t.Errorf("headers sent %v, the caller's now %v", out.Header, req.Header)
	}
	up.APIKey = "sk-other"
	if out, _, _ := up.Outgoing(req); out.Header.Get("Authorization") != "Bearer sk-other" {
		t.Errorf("an upstream whose key changed sent %q", out.Header.Get("Authorization"))
	}
	up.APIKey = ""
	if out, _, _ := up.Outgoing(req); out.Header.Get("Authorization") != "" {
		t.Error("an upstream without a key got the caller's")
	}
}
