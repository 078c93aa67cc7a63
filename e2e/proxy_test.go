package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// TestV1PassesOnlyWhatItShould: no caller credential in any header or
// cookie reaches the upstream, no upstream cookie or account header
// reaches the client, and only the allowed routes pass.
func TestV1PassesOnlyWhatItShould(t *testing.T) {
	up, _, key, g := fundedGateway(t, "tenant")

	up.Enqueue(demobackend.Reply{Content: "Fine.", Header: http.Header{
		"Set-Cookie":          {"upstream_session=operator"},
		"Openai-Organization": {"operator-org"},
	}})
	status, hdr, body := g.do("POST", "/v1/chat/completions", key, chatBody,
		"X-Api-Key", key, "Api-Key", key, "Cookie", "token="+key, "Proxy-Authorization", "Bearer "+key)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	all := up.Requests()
	sent := all[len(all)-1]
	for name, values := range sent.Header {
		for _, v := range values {
			if strings.Contains(v, key) {
				t.Errorf("the caller's key reached the upstream in %s", name)
			}
		}
	}
	if hdr.Get("Set-Cookie") != "" || hdr.Get("Openai-Organization") != "" {
		t.Errorf("upstream headers reached the client: %v", hdr)
	}
	if hdr.Get("X-Request-Id") == "" || hdr.Get("X-Ratelimit-Limit-Requests") == "" {
		t.Errorf("the gateway's own headers are missing: %v", hdr)
	}

	before := len(up.Requests())
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/files"},
		{"GET", "/v1/batches"},
		{"POST", "/v1/images/generations"},
		{"GET", "/v1/chat/completions"},
	} {
		body := ""
		if r.method == "POST" {
			body = chatBody
		}
		status, _, out := g.do(r.method, r.path, key, body)
		if status != 404 || !strings.Contains(out, "route_not_found") {
			t.Errorf("%s %s: %d %s, want 404 route_not_found", r.method, r.path, status, out)
		}
	}
	if n := len(up.Requests()) - before; n != 0 {
		t.Errorf("%d refused routes reached the upstream", n)
	}
	// The prefix in another case still lands on the upstream's base path.
	if status, _, out := g.do("POST", "/V1/chat/completions", key, chatBody); status != 200 {
		t.Errorf("/V1/chat/completions: %d %s", status, out)
	} else if last := up.Requests()[len(up.Requests())-1]; last.Path != "/v1/chat/completions" {
		t.Errorf("upstream saw %q", last.Path)
	}
}
