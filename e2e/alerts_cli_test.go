package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
)

// TestCLIAccountAlerts: `accounts alerts set` saves what PUT .../alerts
// saves (the admin API reads back the same settings and secret), refuses
// what the API refuses with its message, turns off what it is not given,
// and the running gateway sends the alert it set, signed with the secret
// it printed.
func TestCLIAccountAlerts(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var sigs []string
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, sigs = append(bodies, b), append(sigs, r.Header.Get(hmacsig.Header))
		mu.Unlock()
	}))
	defer hook.Close()
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("j", 40),
		"SWITCHYARD_ALERT_WEBHOOK_ALLOW", "127.0.0.0/8")
	key := fundedKey(t, e, "acme") // $10.00
	g := startGateway(t, e)
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--ttl", "10m").lastLine()

	// What the CLI prints is what the admin API answers.
	type settings = admin.AlertsJSON
	var set, read settings
	out := mustCLI(t, e, "accounts", "alerts", "set", "--account", "acme", "--below-usd", "10",
		"--key-spend-percent", "80", "--webhook-url", hook.URL+"/alerts", "--json").stdout
	if err := json.Unmarshal([]byte(out), &set); err != nil {
		t.Fatalf("alerts set --json: %v\n%s", err, out)
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/alerts", owner, "", &read)
	if set.BelowCents == nil || *set.BelowCents != 1000 || set.ThresholdCents == nil || *set.ThresholdCents != 1000 ||
		set.KeySpendPercent == nil || *set.KeySpendPercent != 80 || set.BelowPercent != nil ||
		!strings.HasPrefix(set.WebhookSecret, "whsec_") || set.Below {
		t.Fatalf("alerts set printed %s", out)
	}
	if a, b := mustMarshal(t, set), mustMarshal(t, read); a != b {
		t.Fatalf("the CLI saved %s, the admin API reads %s", a, b)
	}
	show := mustCLI(t, e, "accounts", "alerts", "show", "--account", "acme").stdout
	for _, want := range []string{"Below amount:       $10.00", "Below share:        off", "Threshold:          $10.00",
		"Key spend share:    80% of a key's spend limit", "Webhook secret:     " + set.WebhookSecret, "Email:              off"} {
		if !strings.Contains(show, want) {
			t.Errorf("alerts show lacks %q:\n%s", want, show)
		}
	}

	// Refused as the admin API refuses, and nothing changes.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--below-percent", "0", "--webhook-url", hook.URL}, "1 to 100 percent"},
		{[]string{"--below-usd", "10"}, "needs somewhere to send its alerts"},
		{[]string{"--below-usd", "ten", "--webhook-url", hook.URL}, "dollar amount"},
		{[]string{"--webhook-url", "ftp://hooks.example.com/"}, "http"},
	} {
		r := cli(t, e, append([]string{"accounts", "alerts", "set", "--account", "acme"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("alerts set %v: exit %d, %q; want a refusal saying %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/alerts", owner, "", &read)
	if a, b := mustMarshal(t, set), mustMarshal(t, read); a != b {
		t.Fatalf("refused settings changed them: %s, then %s", a, b)
	}

	// The gateway sends the alert the CLI set: the next charge takes the
	// $10.00 balance below $10.00.
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
		t.Fatalf("a charged request: %d %s", status, body)
	}
	waitFor(t, "the alert the CLI set", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(bodies) > 0
	})
	mu.Lock()
	if err := hmacsig.Verify(sigs[0], bodies[0], []byte(set.WebhookSecret), time.Now(), hmacsig.DefaultTolerance); err != nil {
		t.Errorf("the webhook is not signed with the secret the CLI printed: %v", err)
	}
	if !strings.Contains(string(bodies[0]), `"threshold_cents":1000`) {
		t.Errorf("webhook body %s", bodies[0])
	}
	mu.Unlock()
	show = mustCLI(t, e, "accounts", "alerts", "get", "--account", "acme").stdout
	if !strings.Contains(show, "Balance below it:   yes, since ") {
		t.Errorf("after the alert, alerts get says:\n%s", show)
	}

	// set with nothing turns every alert off.
	out = mustCLI(t, e, "accounts", "alerts", "set", "--account", "acme", "--json").stdout
	var cleared settings
	if err := json.Unmarshal([]byte(out), &cleared); err != nil || cleared.BelowCents != nil || cleared.KeySpendPercent != nil ||
		cleared.ThresholdCents != nil || cleared.WebhookURL != "" || cleared.WebhookSecret != "" {
		t.Fatalf("alerts set without settings: %v %s", err, out)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDashboardAlertSettings sets an account's alerts on the dashboard in
// headless Chromium (e2e/dashboard/alerts.mjs): the delivery log lists an
// alert sent before, what the page refuses and what the API refuses are
// shown, and the saved settings are what the admin API then reads, with
// the signing secret the page showed.
func TestDashboardAlertSettings(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-alerts")
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	const account, hook = "acme", "https://hooks.example.com/switchyard"
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", account, "--subject", "owner@acme", "--ttl", "10m").lastLine()
	g := startGateway(t, e)
	if status, _, body := g.do("POST", "/admin/accounts", operator, `{"name":"`+account+`","usd":"20.00"}`); status != http.StatusCreated {
		t.Fatalf("creating account %s: %d %s", account, status, body)
	}

	// One alert in the delivery log for the page to list: a threshold
	// above the $20.00 balance, a charge, then every alert off again.
	key := newKey(t, e, account)
	adminJSON(t, g, http.StatusOK, "PUT", "/admin/accounts/"+account+"/alerts", owner, `{"below_usd":"30.00","webhook_url":"`+hook+`"}`, nil)
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
		t.Fatalf("a charged request: %d %s", status, body)
	}
	waitFor(t, "the alert to be queued", func() bool {
		var log struct{ Data []struct{ Type string } }
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/"+account+"/alerts/deliveries", owner, "", &log)
		return len(log.Data) == 1 && log.Data[0].Type == "balance.below"
	})
	adminJSON(t, g, http.StatusOK, "PUT", "/admin/accounts/"+account+"/alerts", owner, `{}`, nil)

	var done struct{ Secret string }
	if err := json.Unmarshal(runDashboardScript(t, node, "alerts.mjs", artifacts, 90*time.Second,
		"DASHBOARD_URL="+g.base+"/dashboard/", "ADMIN_TOKEN="+owner, "ACCOUNT="+account, "HOOK_URL="+hook,
		"ARTIFACTS="+artifacts), &done); err != nil {
		t.Fatal(err)
	}
	var got struct {
		BelowCents      *int64 `json:"below_cents"`
		KeySpendPercent *int64 `json:"key_spend_percent"`
		WebhookURL      string `json:"webhook_url"`
		WebhookSecret   string `json:"webhook_secret"`
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/"+account+"/alerts", operator, "", &got)
	if got.BelowCents == nil || *got.BelowCents != 1000 || got.KeySpendPercent == nil || *got.KeySpendPercent != 80 ||
		got.WebhookURL != hook || got.WebhookSecret == "" || got.WebhookSecret != done.Secret {
		t.Fatalf("after the page saved them the settings are %+v (the page showed secret %q)", got, done.Secret)
	}
}
