package e2e

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

// TestV1UpstreamSilentBeforeHeaders: an upstream that accepts a /v1
// request and sends nothing is given up on after switchyard_proxy's
// response_header_timeout, and the client gets the envelope, not a hung
// connection or an empty page.
func TestV1UpstreamSilentBeforeHeaders(t *testing.T) {
	up, e := scriptedEnv(t)
	key := fundedKey(t, e, "acme")

	config := writeConfig(t, exampleConfig(t, "response_header_timeout 120s", "response_header_timeout 500ms"))
	g := startGateway(t, e, config)

	// The upstream would answer after a minute; a client that gives up
	// first shows the gateway waited for it.
	up.Enqueue(demobackend.Reply{Content: "Too late.", Delay: time.Minute})
	req := newRequest(t, g, "POST", "/v1/chat/completions", key, chatBody)
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the gateway did not answer for a silent upstream: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	_, typ, code := errorBody(t, string(body))
	if (resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusGatewayTimeout) ||
		code != "upstream_unavailable" || typ != "server_error" {
		t.Fatalf("%d %s, want 502 upstream_unavailable", resp.StatusCode, body)
	}

	// Errors handle_errors answers are counted with the envelope they got.
	series := `switchyard_requests_total{code="upstream_unavailable",route="v1",status="502"}`
	if got := scrape(t, g)[series]; got != 1 {
		t.Errorf("%s = %v, want 1", series, got)
	}
}
