package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestAdminAPIKeyLifecycle is what an account owner does on the
// dashboard, through the API it calls: a token minted by the CLI, a key
// created (and shown once), used with the OpenAI client, a top-up refused
// to the owner and made by an operator, the balance and usage moving, the
// key revoked and refused.
func TestAdminAPIKeyLifecycle(t *testing.T) {
	up, e := scriptedEnv(t)
	g := startGateway(t, e)

	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	info, err := os.Stat(filepath.Join(e["SWITCHYARD_DATA_DIR"], "admin_jwt_secret"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("admin_jwt_secret: %v, mode %v; want a 0600 file", err, info.Mode())
	}
	admin := func(method, path, token, body string) (int, string) {
		t.Helper()
		status, h, b := g.do(method, path, token, body)
		if h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Content-Type %q, Cache-Control %q", method, path, h.Get("Content-Type"), h.Get("Cache-Control"))
		}
		return status, b
	}
	must := func(want int, method, path, token, body string, v any) {
		t.Helper()
		status, b := admin(method, path, token, body)
		if status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
		}
		if v != nil {
			if err := json.Unmarshal([]byte(b), v); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, b)
			}
		}
	}

	must(http.StatusCreated, "POST", "/admin/accounts", operator, `{"name":"acme","usd":"5"}`, nil)
	// From here on, the account owner's own token.
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme").lastLine()
	if status, b := admin("GET", "/admin/accounts", owner, ""); status != 200 || strings.Contains(b, `"other"`) {
		t.Fatalf("owner's accounts: %d %s", status, b)
	}
	if status, _ := admin("POST", "/admin/accounts", owner, `{"name":"other"}`); status != http.StatusForbidden {
		t.Errorf("an account token created an account: %d", status)
	}
	if status, _ := admin("GET", "/admin/accounts/acme", "sk-"+strings.Repeat("x", 48), ""); status != http.StatusUnauthorized {
		t.Errorf("an API key was accepted by the admin API: %d", status)
	}
	// The admin API is not behind API keys, and the public API not behind tokens.
	if status, _, _ := g.do("GET", "/v1/models", owner, ""); status != http.StatusUnauthorized {
		t.Errorf("an admin token was accepted on /v1: %d", status)
	}

	var created struct{ ID, Key, Hint string }
	must(http.StatusCreated, "POST", "/admin/accounts/acme/keys", owner, `{"label":"ci"}`, &created)
	_, listing := admin("GET", "/admin/accounts/acme/keys", owner, "")
	if strings.Contains(listing, created.Key) || !strings.Contains(listing, created.Hint) {
		t.Fatalf("key listing %s: the key must not appear, its hint must", listing)
	}

	client := openaiClient(g, created.Key, "/v1")
	ctx := context.Background()
	chat := func() error {
		up.Enqueue(testupstream.Text("Paid for through the admin API."))
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "any-model",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		return err
	}
	if err := chat(); err != nil {
		t.Fatalf("chat with the new key: %v", err)
	}
	settleLedgers(t) // the charge is committed just after the answer

	var topup struct {
		BalanceCents int64 `json:"balance_cents"`
	}
	must(http.StatusForbidden, "POST", "/admin/accounts/acme/topups", owner, `{"usd":"10.00"}`, nil)
	must(http.StatusBadRequest, "POST", "/admin/accounts/acme/topups", operator, `{"usd":"4.99"}`, nil)
	must(http.StatusCreated, "POST", "/admin/accounts/acme/topups", operator, `{"usd":"10.00"}`, &topup)
	var acct struct {
		BalanceCents int64 `json:"balance_cents"`
	}
	must(http.StatusOK, "GET", "/admin/accounts/acme", owner, "", &acct)
	if acct.BalanceCents != topup.BalanceCents || acct.BalanceCents >= 1500 || acct.BalanceCents < 1400 {
		t.Errorf("balance %d after a charge and a $10 top-up on $5 (top-up said %d)", acct.BalanceCents, topup.BalanceCents)
	}
	var usage struct {
		Data []struct {
			KeyID     string `json:"key_id"`
			Requests  int64  `json:"requests"`
			CostCents int64  `json:"cost_cents"`
		} `json:"data"`
	}
	must(http.StatusOK, "GET", "/admin/accounts/acme/usage?by=key", owner, "", &usage)
	if len(usage.Data) != 1 || usage.Data[0].KeyID != created.ID || usage.Data[0].Requests != 1 ||
		usage.Data[0].CostCents != 1500-acct.BalanceCents {
		t.Errorf("usage %+v; want one request by %s costing %d", usage.Data, created.ID, 1500-acct.BalanceCents)
	}

	must(http.StatusOK, "DELETE", "/admin/accounts/acme/keys/"+created.ID, owner, "", nil)
	err = chat()
	if !isStatus(err, http.StatusUnauthorized) {
		t.Fatalf("chat with the revoked key: %v, want 401", err)
	}

	var audit struct {
		Data []struct {
			Action, Subject, Outcome string
			RemoteIP                 string `json:"remote_ip"`
		} `json:"data"`
	}
	must(http.StatusOK, "GET", "/admin/audit", operator, "", &audit)
	var actions []string
	for _, a := range audit.Data {
		actions = append(actions, a.Action+":"+a.Outcome)
		if a.RemoteIP != "127.0.0.1" {
			t.Errorf("audit entry %+v: remote IP", a)
		}
	}
	want := "key.revoke:ok topup:ok topup:invalid_amount topup:permission_denied key.create:ok account.create:permission_denied account.create:ok"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("audit log %q, want %q", got, want)
	}
	if !strings.Contains(g.log.String(), `"action":"key.revoke"`) {
		t.Error("the audit entries are not in the server log")
	}
}

// TestAdminAPIDistributed: on PostgreSQL no secret is generated. Without
// one the gateway still serves its API and the admin API says why it is
// off; with one, tokens the CLI mints from the same environment work on
// every node, and reserved_cents comes from Redis.
func TestAdminAPIDistributed(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL())
	off := startGateway(t, e)
	status, _, body := off.do("GET", "/admin/me", "x", "")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"admin_not_configured"`) {
		t.Fatalf("admin API without a secret on PostgreSQL: %d %s", status, body)
	}
	if r := cli(t, e, "admin", "token", "--operator"); r.code == 0 || !strings.Contains(r.stderr, "SWITCHYARD_ADMIN_JWT_SECRET") {
		t.Errorf("admin token without a secret on PostgreSQL: exit %d, %q", r.code, r.stderr)
	}
	off.stop()

	e = e.with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("j", 40))
	g1, g2 := startGateway(t, e), startGateway(t, e)
	operator := mustCLI(t, e, "admin", "token", "--operator").lastLine()
	if status, _, body := g1.do("POST", "/admin/accounts", operator, `{"name":"acme","usd":"7.50"}`); status != http.StatusCreated {
		t.Fatalf("create account on node 1: %d %s", status, body)
	}
	status, _, body = g2.do("GET", "/admin/accounts/acme", operator, "")
	var acct struct {
		BalanceCents  int64 `json:"balance_cents"`
		ReservedCents int64 `json:"reserved_cents"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &acct) != nil || acct.BalanceCents != 750 || acct.ReservedCents != 0 {
		t.Fatalf("account on node 2: %d %s", status, body)
	}
	other := mustCLI(t, e.with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("k", 40)), "admin", "token", "--operator").lastLine()
	if status, _, _ := g2.do("GET", "/admin/me", other, ""); status != http.StatusUnauthorized {
		t.Errorf("a token signed with another secret: %d", status)
	}
}
