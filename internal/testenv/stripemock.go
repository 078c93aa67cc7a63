package testenv

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// StripeMockEnv names the environment variable holding the base URL of
// a stripe-mock server (github.com/stripe/stripe-mock) that tests send
// Stripe API calls to.
const StripeMockEnv = "SWITCHYARD_TEST_STRIPE_MOCK"

// DefaultStripeMock is the URL used when StripeMockEnv is unset: where
// scripts/services.sh starts stripe-mock.
const DefaultStripeMock = "http://127.0.0.1:12111"

// StripeMock returns the base URL of the test stripe-mock server. The
// test fails if it does not answer.
func StripeMock(t testing.TB) string {
	t.Helper()
	base := strings.TrimSuffix(getenv(StripeMockEnv, DefaultStripeMock), "/")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/v1/balance", nil)
	if err != nil {
		t.Fatalf("%s=%q: %v", StripeMockEnv, base, err)
	}
	req.SetBasicAuth("sk_test_switchyard", "")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return base
		}
	}
	t.Fatalf("stripe-mock not answering at %s (set %s to change it): run scripts/services.sh, which installs "+
		"(go install github.com/stripe/stripe-mock@v0.203.0) and starts it, or start it yourself with "+
		"stripe-mock -http-port 12111: %v", base, StripeMockEnv, err)
	return ""
}
