package e2e

import (
	"net/http"
	"testing"
	"time"
)

// TestDashboardOwnerSeesNoAddFunds signs in to the dashboard in headless
// Chromium with an account owner's token: the overview shows the balance
// and says that an operator adds funds, with no top-up form, because the
// admin API refuses that token's top-ups (GET /admin/me says so in
// can_top_up). The operator's view keeps its form (TestDashboardInBrowser).
func TestDashboardOwnerSeesNoAddFunds(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-owner")
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	const account = "acme"
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", account, "--subject", "owner@acme", "--ttl", "10m").lastLine()
	g := startGateway(t, e)
	if status, _, body := g.do("POST", "/admin/accounts", operator, `{"name":"`+account+`","usd":"5.00"}`); status != http.StatusCreated {
		t.Fatalf("creating account %s: %d %s", account, status, body)
	}

	runDashboardScript(t, node, "owner.mjs", artifacts, 60*time.Second,
		"DASHBOARD_URL="+g.base+"/dashboard/", "ADMIN_TOKEN="+owner, "ACCOUNT="+account, "ARTIFACTS="+artifacts)
	if got := balanceCents(t, g, operator, account); got != 500 {
		t.Errorf("the owner's visit moved the balance to %d cents", got)
	}
}
