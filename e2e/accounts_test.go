package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAccountsCLI: accounts create, list, disable and enable, with the
// account ids the admin API shows, and a disabled account's key refused
// by the running gateway on its next request.
func TestAccountsCLI(t *testing.T) {
	_, e := scriptedEnv(t)
	g := startGateway(t, e)
	out := mustCLI(t, e, "accounts", "create", "--account", "acme", "--usd", "10").stdout
	if !strings.Contains(out, "acct_") || !strings.Contains(out, "$10.00") {
		t.Errorf("accounts create printed %q", out)
	}
	if r := cli(t, e, "accounts", "create", "--account", "acme"); r.code == 0 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("creating acme again: exit %d, %q", r.code, r.stderr)
	}
	if r := cli(t, e, "accounts", "create", "--account", "beta", "--usd", "4"); r.code == 0 {
		t.Errorf("creating with $4: exit 0, %q", r.stdout)
	}
	var page struct {
		Data []struct {
			ID, Name     string
			BalanceCents int64 `json:"balance_cents"`
			Disabled     bool
		}
		HasMore *bool `json:"has_more"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, e, "accounts", "list", "--json").stdout), &page); err != nil {
		t.Fatal(err)
	}
	if page.HasMore == nil || *page.HasMore {
		t.Fatalf("accounts list --json is not the admin API's listing of everything: has_more %v", page.HasMore)
	}
	listed := page.Data
	if len(listed) != 1 || listed[0].Name != "acme" || listed[0].BalanceCents != 1000 || listed[0].Disabled {
		t.Fatalf("accounts list = %+v; want acme with $10, and no beta (its amount was refused first)", listed)
	}
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	var viaAPI struct{ ID string }
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme", operator, "", &viaAPI)
	if viaAPI.ID != listed[0].ID {
		t.Errorf("the admin API says id %q, the CLI %q", viaAPI.ID, listed[0].ID)
	}

	key := newKey(t, e, "acme")
	if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusOK {
		t.Fatalf("before disabling: %d %s", status, body)
	}
	mustCLI(t, e, "accounts", "disable", "--account", "acme")
	if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusUnauthorized {
		t.Errorf("a disabled account's key: %d %s, want 401", status, body)
	}
	if r := cli(t, e, "keys", "create", "--account", "acme"); r.code == 0 || !strings.Contains(r.stderr, "disabled") {
		t.Errorf("keys create on a disabled account: exit %d, %q", r.code, r.stderr)
	}
	if list := mustCLI(t, e, "accounts", "list").stdout; !strings.Contains(list, "disabled") {
		t.Errorf("accounts list does not show acme disabled:\n%s", list)
	}
	mustCLI(t, e, "accounts", "enable", "--account", "acme")
	if status, _, body := g.do("GET", "/v1/models", key, ""); status != http.StatusOK {
		t.Errorf("after enabling: %d %s", status, body)
	}
}
