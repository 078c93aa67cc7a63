package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDashboardCreatesAccountAndAddsFunds runs e2e/dashboard/checkout.mjs
// in headless Chromium: an operator creates the first account from the
// empty state, its owner adds $25 through Stripe Checkout (stripe-mock,
// the redirect answered by a stub page), the test delivers Stripe's
// webhook, and the page shows the balance and the receipt.
func TestDashboardCreatesAccountAndAddsFunds(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-checkout")
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	e = stripeEnv(t, e)
	const account = "acme"
	operator := mustCLI(t, e, "admin", "token", "--operator", "--subject", "ops@example.com", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", account, "--subject", "owner@acme", "--ttl", "10m").lastLine()
	g := startGateway(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "checkout.mjs")
	cmd.Dir = filepath.Join(repoRoot, "e2e", "dashboard")
	cmd.Env = append(os.Environ(),
		"DASHBOARD_URL="+g.base+"/dashboard/",
		"OPERATOR_TOKEN="+operator,
		"OWNER_TOKEN="+owner,
		"ACCOUNT="+account,
		"ARTIFACTS="+artifacts,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var events []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var ev struct{ Event, Session, URL string }
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Errorf("browser script wrote %q", lines.Text())
			continue
		}
		events = append(events, ev.Event)
		if ev.Event != "redirected" {
			continue
		}
		if !strings.HasPrefix(ev.URL, "https://checkout.stripe.com/") || !strings.HasPrefix(ev.Session, "cs_") {
			t.Errorf("redirected to %q for session %q", ev.URL, ev.Session)
		}
		if got := balanceCents(t, g, operator, account); got != 0 {
			t.Errorf("the balance moved to %d cents before Stripe confirmed the payment", got)
		}
		var acct struct{ ID string }
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/"+account, operator, "", &acct)
		if status, body := stripeDeliver(t, g, "evt_dashboard", "checkout.session.completed", map[string]any{
			"id": ev.Session, "object": "checkout.session", "mode": "payment", "payment_status": "paid", "amount_total": 2500,
			"currency": "usd", "payment_intent": "pi_dashboard", "metadata": map[string]string{"switchyard_account": acct.ID},
		}); status != http.StatusOK {
			t.Errorf("webhook: %d %s", status, body)
		}
		if _, err := stdin.Write([]byte("{}\n")); err != nil {
			t.Errorf("writing to the browser script: %v", err)
		}
	}
	_ = stdin.Close()
	werr := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the browser script did not finish within 90s; events %v\n%s", events, stderr.String())
	}
	if werr != nil || len(events) == 0 || events[len(events)-1] != "done" {
		t.Fatalf("browser script: %v; events %v; screenshots in %s\n%s", werr, events, artifacts, stderr.String())
	}
	t.Logf("screenshots in %s", artifacts)
}
