package e2e

import (
	"net/http"
	"testing"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestFailedAuthenticationsPerAddress: past limits' auth_failures, a
// client address is answered 429 before any key lookup, even with a valid
// key, while other addresses are not; the address is Caddy's client IP,
// so a forwarded header counts only from a trusted proxy.
func TestFailedAuthenticationsPerAddress(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	bad := "sk-" + "Q123456789012345678901234567890123456789012345678"[:48]

	refusedAfterThree := func(t *testing.T, g *gateway, from ...string) {
		t.Helper()
		for i := range 3 {
			if status, _, body := g.do("GET", "/v1/models", bad, "", from...); status != http.StatusUnauthorized {
				t.Fatalf("bad key %d: %d %s", i+1, status, body)
			}
		}
		status, h, body := g.do("GET", "/v1/models", bad, "", from...)
		wantError(t, "fourth bad key", status, body, http.StatusTooManyRequests, "rate_limit_exceeded", "requests")
		if h.Get("Retry-After") == "" {
			t.Fatalf("fourth bad key: no Retry-After")
		}
	}

	t.Run("remote address", func(t *testing.T) {
		e := embeddedEnv(t, up.URL())
		key := fundedKey(t, e, "guarded")
		g := startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\tauth_failures 3 1m\n\t\t}"))
		refusedAfterThree(t, g)
		// Refused before the lookup: the valid key is not even tried.
		if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusTooManyRequests {
			t.Fatalf("a valid key from the blocked address: %d %s", status, body)
		}
		// A forwarded header from an untrusted peer changes nothing.
		if status, _, body := g.do("GET", "/v1/models", key, "", "X-Forwarded-For", "198.51.100.9"); status != http.StatusTooManyRequests {
			t.Fatalf("a spoofed X-Forwarded-For escaped the block: %d %s", status, body)
		}
	})

	t.Run("admin tokens", func(t *testing.T) {
		e := embeddedEnv(t, up.URL())
		g := startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\tauth_failures 3 1m\n\t\t}"))
		operator := mustCLI(t, e, "admin", "token", "--operator").lastLine()
		for i := range 3 {
			if status, _, body := g.do("GET", "/admin/me", "not-a-token", ""); status != http.StatusUnauthorized {
				t.Fatalf("bad token %d: %d %s", i+1, status, body)
			}
		}
		if status, _, body := g.do("GET", "/admin/me", "not-a-token", ""); status != http.StatusTooManyRequests {
			t.Fatalf("fourth bad token: %d %s", status, body)
		}
		// The budget is the address's, whichever door it knocked on.
		if status, _, body := g.do("GET", "/admin/me", operator, ""); status != http.StatusTooManyRequests {
			t.Fatalf("a valid token from the blocked address: %d %s", status, body)
		}
		if status, _, body := g.do("GET", "/v1/models", bad, ""); status != http.StatusTooManyRequests {
			t.Fatalf("an API key from the address blocked by bad tokens: %d %s", status, body)
		}
	})

	t.Run("trusted proxy", func(t *testing.T) {
		e := embeddedEnv(t, up.URL())
		key := fundedKey(t, e, "guarded")
		cfg := faultConfig(t, []string{"limits {\n\t\t\tauth_failures 3 1m\n\t\t}"},
			"\tservers {\n", "\tservers {\n\t\ttrusted_proxies static 127.0.0.1/32\n\t\tclient_ip_headers X-Forwarded-For\n")
		g := startGateway(t, e, cfg)
		refusedAfterThree(t, g, "X-Forwarded-For", "203.0.113.1")
		if status, _, body := g.do("GET", "/v1/models", key, "", "X-Forwarded-For", "203.0.113.1"); status != http.StatusTooManyRequests {
			t.Fatalf("a valid key from the blocked client: %d %s", status, body)
		}
		if status, _, body := g.do("GET", "/v1/models", key, "", "X-Forwarded-For", "203.0.113.2"); status != http.StatusOK {
			t.Fatalf("another client behind the same proxy: %d %s", status, body)
		}
	})
}
