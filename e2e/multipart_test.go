package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestV1UploadsAreRefused: /v1 passes no body its meter cannot read,
// and no meter reads an upload the backend answers. A config that routes
// one upstream (POST /audio/transcriptions) is refused when it loads,
// naming the route; under the config that loads, a multipart upload to
// /v1 is refused with 415 before it reaches the upstream or spends any of
// the key's rate.
func TestV1UploadsAreRefused(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "uploader")

	const anchor = "\t\tdial_timeout 10s" // in switchyard_proxy
	cfg := writeConfig(t, exampleConfig(t, anchor, "\t\troutes POST /audio/transcriptions\n"+anchor))
	res := cli(t, e.with("SWITCHYARD_LISTEN", "127.0.0.1:0", "SWITCHYARD_ADMIN", "127.0.0.1:0"),
		"validate", "--config", cfg, "--adapter", "caddyfile")
	if res.code == 0 || !strings.Contains(res.stderr, "POST /audio/transcriptions") || !strings.Contains(res.stderr, "no meter reads its body") {
		t.Fatalf("a config routing an unmetered upload upstream: exit %d\n%s", res.code, res.stderr)
	}

	g := startGateway(t, e, filepath.Join(repoRoot, "Caddyfile.example"))
	body := multipartBody("B", "meeting.wav", "RIFF....WAVEfmt ")
	for _, path := range []string{"/v1/audio/transcriptions", "/v1/chat/completions"} {
		status, h, out := g.do("POST", path, key, body, "Content-Type", "multipart/form-data; boundary=B")
		wantError(t, path, status, out, http.StatusUnsupportedMediaType, "unsupported_media_type", "invalid_request_error")
		if h.Get("X-Ratelimit-Remaining-Requests") != "" {
			t.Errorf("%s: the refused upload reached the rate limiter", path)
		}
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("%d refused uploads reached the upstream", n)
	}
}
