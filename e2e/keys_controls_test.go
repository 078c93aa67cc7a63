package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// TestKeySpendLimitCannotBeOvershot sends 50 requests at once with a key
// limited to $1 a day, on an account holding $10, each answer costing 3
// cents: the key's holds count against its limit in the admission step,
// so no more than 33 are admitted, on one node with the in-process
// limiter and on two nodes sharing PostgreSQL and Redis; then the rest of
// the limit is spent one request at a time, and the key is refused with
// 402 key_spend_limit_reached at 99 cents, never past $1.
func TestKeySpendLimitCannotBeOvershot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   func(t *testing.T, upstream string) env
		nodes int
	}{
		{name: "sqlite", env: embeddedEnv, nodes: 1},
		{name: "postgres and redis", env: distributedEnv, nodes: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := testupstream.Start(t, demobackend.Options{TimeToFirstToken: 20 * time.Millisecond})
			usage := demobackend.Usage{PromptTokens: 1000, CompletionTokens: 2700, TotalTokens: 3700}
			const answerCents, limitCents = 3, 100
			body := `{"model":"m","max_tokens":2700,"messages":[{"role":"user","content":"hi"}]}`
			prof := policy.ProfileFor(policy.RevisionB)
			if p := prof.Price(int64(usage.PromptTokens), int64(usage.CompletionTokens)); p != answerCents {
				t.Fatalf("the scripted answer costs %d cents, want %d", p, answerCents)
			}
			if hold := billing.HoldEstimate(prof, int64(len(body)), 2700, billing.DefaultHoldTokens); hold != answerCents {
				t.Fatalf("the request holds %d cents, want %d", hold, answerCents)
			}
			up.Match(func(*demobackend.Request) bool { return true }, demobackend.Reply{Content: "Fine.", Usage: &usage})

			e := tc.env(t, up.URL())
			key := mustCLI(t, e, "keys", "create", "--account", "team", "--spend-limit", "1", "--spend-period", "day").lastLine()
			st := openStore(t, e)
			acct := accountNamed(t, st, "team")
			credit(t, st, acct.ID, 1000, "ten-dollars")
			var nodes []*gateway
			cfg := switchyardConfig(t, "limits {\n\t\t\t"+loadedRedis+"\n\t\t}")
			for range tc.nodes {
				nodes = append(nodes, startGateway(t, e, cfg))
			}

			const n = 50
			statuses := make([]int, n)
			bodies := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					statuses[i], _, bodies[i] = nodes[i%len(nodes)].do("POST", "/v1/chat/completions", key, body)
				})
			}
			wg.Wait()
			admitted := 0
			for i, status := range statuses {
				switch status {
				case http.StatusOK:
					admitted++
				case http.StatusPaymentRequired, http.StatusTooManyRequests:
					if _, _, code := errorBody(t, bodies[i]); code != "key_spend_limit_reached" {
						t.Errorf("request %d refused with %d %s", i, status, bodies[i])
					}
				default:
					t.Errorf("request %d: %d %s", i, status, bodies[i])
				}
			}
			t.Logf("%d of %d requests admitted", admitted, n)
			if admitted == 0 || admitted > limitCents/answerCents {
				t.Fatalf("%d requests admitted under a %d-cent limit at %d cents each", admitted, limitCents, answerCents)
			}

			// The rest, one request at a time, until the key is refused. A
			// charge's hold is given back to the limiter just after its
			// commit: until then the two count twice, which may refuse a
			// request near the limit for a moment (it errs on the safe
			// side). A refusal is final once it holds for a second.
			for range n {
				settleLedgers(t)
				status, _, b := nodes[len(nodes)-1].do("POST", "/v1/chat/completions", key, body)
				for deadline := time.Now().Add(time.Second); status != http.StatusOK && time.Now().Before(deadline); {
					time.Sleep(20 * time.Millisecond)
					status, _, b = nodes[len(nodes)-1].do("POST", "/v1/chat/completions", key, body)
				}
				if status == http.StatusOK {
					continue
				}
				wantError(t, "at the limit", status, b, http.StatusPaymentRequired, "key_spend_limit_reached", "insufficient_quota")
				break
			}
			settleLedgers(t)
			var spent int64
			for _, c := range charges(t, e, "team") {
				spent -= c.AmountCents
			}
			if spent != limitCents/answerCents*answerCents {
				t.Fatalf("the key spent %d cents under a %d-cent limit, want %d", spent, limitCents, limitCents/answerCents*answerCents)
			}
			if got := len(up.ChatRequests()); int64(got)*answerCents != spent {
				t.Errorf("%d requests reached the upstream for %d cents of charges", got, spent)
			}
			// The account's other keys are not held to this key's limit.
			other := mustCLI(t, e, "keys", "create", "--account", "team").lastLine()
			if status, _, b := nodes[0].do("POST", "/v1/chat/completions", other, body); status != http.StatusOK {
				t.Fatalf("another key of the account: %d %s", status, b)
			}
		})
	}
}

// TestKeyControlsRefuse: expired keys, keys used from outside their
// address ranges and keys asking for a model outside their list are
// refused with their codes before anything is counted or reaches the
// upstream; a key's own rate is below the profile's; keys list shows
// when a key was last used.
func TestKeyControlsRefuse(t *testing.T) {
	up, e := scriptedEnv(t)
	st := openStore(t, e)
	create := func(flags ...string) string {
		return mustCLI(t, e, append([]string{"keys", "create", "--account", "ctl"}, flags...)...).lastLine()
	}
	models := create("--models", "m2,m3")
	outside := create("--allow-ip", "203.0.113.0/24")
	inside := create("--allow-ip", "203.0.113.0/24,127.0.0.1", "--rpm", "2")
	expired := create("--expires", "1h")
	credit(t, st, accountNamed(t, st, "ctl").ID, 500, "five-dollars")
	ctx := context.Background()
	// Expired an hour ago: only the store can say so, the CLI refuses it.
	if _, err := st.SetKeyControls(ctx, keyIDOf(t, st, "ctl", expired), storage.KeyControls{ExpiresAt: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, e)

	status, _, body := g.do("POST", "/v1/chat/completions", expired, chatBody)
	wantError(t, "an expired key", status, body, http.StatusUnauthorized, "key_expired", "invalid_request_error")
	status, _, body = g.do("POST", "/v1/chat/completions", outside, chatBody)
	wantError(t, "from outside the key's ranges", status, body, http.StatusForbidden, "address_not_allowed", "permission_error")
	status, _, body = g.do("POST", "/v3/chat/completions", models, chatBody)
	wantError(t, "a model outside the key's list", status, body, http.StatusForbidden, "model_not_allowed", "permission_error")
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("refused requests reached the upstream: %d", n)
	}
	if status, _, body := g.do("POST", "/v1/chat/completions", models, `{"model":"m3","messages":[{"role":"user","content":"hi"}]}`); status != http.StatusOK {
		t.Fatalf("a listed model: %d %s", status, body)
	}

	// 2 requests a minute: the third is refused.
	for i := range 3 {
		status, h, body := g.do("POST", "/v1/chat/completions", inside, chatBody)
		if i < 2 && status != http.StatusOK {
			t.Fatalf("request %d from a listed address: %d %s", i, status, body)
		}
		if i == 2 {
			wantError(t, "past the key's own rate", status, body, http.StatusTooManyRequests, "rate_limit_exceeded", "")
			if h.Get("X-Ratelimit-Limit-Requests") != "2" {
				t.Errorf("x-ratelimit-limit-requests %q, want the key's 2", h.Get("X-Ratelimit-Limit-Requests"))
			}
		}
	}

	var keys []struct {
		Hint       string `json:"hint"`
		LastUsedAt *int64 `json:"last_used_at"`
	}
	var listing struct {
		Data json.RawMessage `json:"data"`
	}
	out := mustCLI(t, e, "keys", "list", "--account", "ctl", "--json").stdout
	if err := json.Unmarshal([]byte(out), &listing); err != nil || json.Unmarshal(listing.Data, &keys) != nil {
		t.Fatalf("keys list --json: %v\n%s", err, out)
	}
	used := map[string]bool{}
	for _, k := range keys {
		used[k.Hint] = k.LastUsedAt != nil
	}
	if !used[policy.KeyHint(inside)] || !used[policy.KeyHint(models)] || used[policy.KeyHint(outside)] || used[policy.KeyHint(expired)] {
		t.Fatalf("last used: %v\n%s", used, out)
	}
}

// keyIDOf is the id of key, found among the account's keys by its hint.
func keyIDOf(t *testing.T, st storage.Store, account, key string) string {
	t.Helper()
	keys, err := st.ListKeys(context.Background(), accountNamed(t, st, account).ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Hint == policy.KeyHint(key) {
			return k.ID
		}
	}
	t.Fatalf("no key %s in account %s", policy.KeyHint(key), account)
	return ""
}

// TestDashboardKeyLimits creates a key with limits on the dashboard in
// headless Chromium (e2e/dashboard/keys.mjs): the key it shows is stored
// with them, and its model allow-list refuses another model.
func TestDashboardKeyLimits(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-keys")
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	const account = "acme"
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", account, "--subject", "owner@acme", "--ttl", "10m").lastLine()
	g := startGateway(t, e)
	if status, _, body := g.do("POST", "/admin/accounts", operator, `{"name":"`+account+`","usd":"5.00"}`); status != http.StatusCreated {
		t.Fatalf("creating account %s: %d %s", account, status, body)
	}

	var done struct{ Key string }
	if err := json.Unmarshal(runDashboardScript(t, node, "keys.mjs", artifacts, 60*time.Second,
		"DASHBOARD_URL="+g.base+"/dashboard/", "ADMIN_TOKEN="+owner, "ARTIFACTS="+artifacts), &done); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	st := openStore(t, e)
	keys, err := st.ListKeys(ctx, accountNamed(t, st, account).ID)
	// Two keys: "limited", then "phone", made on a phone-sized screen
	// without limits; the list is newest first.
	if err != nil || len(keys) != 2 || keys[1].Label != "limited" || keys[0].Controls.SpendLimitCents != 0 {
		t.Fatalf("keys %+v, %v", keys, err)
	}
	c := keys[1].Controls
	if c.SpendLimitCents != 100 || c.SpendPeriod != storage.SpendPerDay || c.RatePerMinute != 10 || len(c.Models) != 2 {
		t.Fatalf("stored controls %+v", c)
	}
	status, _, body := g.do("POST", "/v1/chat/completions", done.Key, chatBody)
	wantError(t, "a model outside the key's list", status, body, http.StatusForbidden, "model_not_allowed", "permission_error")
}

// TestDashboardEditKeyLimits changes a key's limits on the dashboard in
// headless Chromium (e2e/dashboard/limits.mjs): a malformed address range
// is refused with its message in the dialog, the corrected limits are
// saved, and a second edit lifts the model list and the spend limit,
// which the admin API then shows and the gateway applies.
func TestDashboardEditKeyLimits(t *testing.T) {
	node := browserTool(t)
	artifacts := artifactsDir(t, "dashboard-limits")
	_, e := scriptedEnv(t, "SWITCHYARD_ADMIN_JWT_SECRET", "dashboard-test-secret-0123456789abcdef")
	const account = "acme"
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", account, "--subject", "owner@acme", "--ttl", "10m").lastLine()
	g := startGateway(t, e)
	if status, _, body := g.do("POST", "/admin/accounts", operator, `{"name":"`+account+`","usd":"5.00"}`); status != http.StatusCreated {
		t.Fatalf("creating account %s: %d %s", account, status, body)
	}
	status, _, body := g.do("POST", "/admin/accounts/"+account+"/keys", owner, `{"label":"ci","models":["m9"]}`)
	var created struct{ Key string }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &created) != nil {
		t.Fatalf("creating a key: %d %s", status, body)
	}

	var done struct{ Expires string }
	if err := json.Unmarshal(runDashboardScript(t, node, "limits.mjs", artifacts, 90*time.Second,
		"DASHBOARD_URL="+g.base+"/dashboard/", "ADMIN_TOKEN="+owner, "ACCOUNT="+account, "ARTIFACTS="+artifacts), &done); err != nil {
		t.Fatal(err)
	}

	status, _, body = g.do("GET", "/admin/accounts/"+account+"/keys", owner, "")
	var list struct {
		Data []struct {
			Label string `json:"label"`
			admin.KeyControlsJSON
		} `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list.Data) != 1 {
		t.Fatalf("GET keys: %d %s", status, body)
	}
	k := list.Data[0]
	// Midnight starting the day the dialog was given, in the browser's
	// time zone (UTC), in Unix seconds.
	day, err := time.Parse(time.DateOnly, done.Expires)
	if err != nil {
		t.Fatal(err)
	}
	wantExpiry := day.Unix()
	if k.ExpiresAt == nil || *k.ExpiresAt != wantExpiry || len(k.Models) != 0 || k.SpendLimitCents != 0 || k.SpendPeriod != "" ||
		strings.Join(k.AllowedIPs, ",") != "203.0.113.0/24,2001:db8::/32" || k.RatePerMinute != 5 || k.StreamLimit != 1 {
		t.Fatalf("after the edits the key has %s, want expiry %d, no models, no spend limit, the two ranges, 5/min and 1 stream", body, wantExpiry)
	}
	// The gateway applies them: the key is used from 127.0.0.1, outside
	// its ranges now.
	status, _, body = g.do("POST", "/v1/chat/completions", created.Key, chatBody)
	wantError(t, "a key used from outside its new ranges", status, body, http.StatusForbidden, "address_not_allowed", "permission_error")
}

// TestKeyStreamLimit: a key limited to 2 concurrent streams gets 429 on
// its third while the profile allows 5, and another key of the account
// still gets its own slots.
func TestKeyStreamLimit(t *testing.T) {
	e := embeddedEnv(t, slowUpstream(t).URL())
	key := mustCLI(t, e, "keys", "create", "--account", "narrow", "--streams", "2").lastLine()
	other := fundedKey(t, e, "narrow")
	g := startGateway(t, e)

	mustOpenStreams(t, 2, key, g)
	status, body, _ := openStream(t, g, key)
	if status != http.StatusTooManyRequests || !strings.Contains(body, "Concurrency limit") {
		t.Fatalf("third stream of a key limited to 2: %d %s", status, body)
	}
	mustOpenStreams(t, 3, other, g)
}

// TestModelListsShowTheKeysModels: through the OpenAI client, a key
// limited to some models lists only those on /v1/models and /v3/models,
// from a single upstream's own list and from the configured model pools
// alike, and is told that a model outside its list does not exist; a
// key without a list sees every model.
func TestModelListsShowTheKeysModels(t *testing.T) {
	ctx := context.Background()
	list := func(t *testing.T, g *gateway, key, prefix string) []string {
		t.Helper()
		client := openaiClient(g, key, prefix)
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatalf("%s/models: %v", prefix, err)
		}
		ids := []string{}
		for _, m := range page.Data {
			if m.Object != "model" {
				t.Errorf("%s/models: an entry of object %q", prefix, m.Object)
			}
			ids = append(ids, m.ID)
		}
		return ids
	}
	want := func(t *testing.T, what string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s lists %q, want %q", what, got, want)
		}
	}

	t.Run("one upstream", func(t *testing.T) {
		up := testupstream.Start(t, demobackend.Options{Models: []string{"m1", "m2", "m3"}})
		e := embeddedEnv(t, up.URL())
		all := fundedKey(t, e, "lists")
		some := mustCLI(t, e, "keys", "create", "--account", "lists", "--models", "m3,m1").lastLine()
		other := mustCLI(t, e, "keys", "create", "--account", "lists", "--models", "m2").lastLine()
		g := startGateway(t, e)

		want(t, "/v1 for a key without a list", list(t, g, all, "/v1"), "m1", "m2", "m3")
		want(t, "/v1 for a key of m3 and m1", list(t, g, some, "/v1"), "m1", "m3")
		// /v3 serves the upstream's first model.
		want(t, "/v3 for a key without a list", list(t, g, all, "/v3"), "m1")
		want(t, "/v3 for a key of m3 and m1", list(t, g, some, "/v3"), "m1")
		want(t, "/v3 for a key of m2", list(t, g, other, "/v3"))

		client := openaiClient(g, some, "/v1")
		if m, err := client.Models.Get(ctx, "m3"); err != nil || m.ID != "m3" {
			t.Errorf("GET /v1/models/m3 of a key that may use it: %v %v", m, err)
		}
		before := len(up.Requests())
		if _, err := client.Models.Get(ctx, "m2"); !isStatus(err, http.StatusNotFound) {
			t.Errorf("GET /v1/models/m2 of a key that may not use it: %v, want 404", err)
		}
		if len(up.Requests()) != before {
			t.Errorf("a model outside the key's list was asked upstream")
		}
	})

	t.Run("model pools", func(t *testing.T) {
		a := startBackend(t, demobackend.Options{})
		g, e, all := routedGateway(t, fmt.Sprintf(`
		model alpha {
			upstream %[1]s
		}
		model beta {
			upstream %[1]s
		}
		model gamma {
			upstream %[1]s
		}`, a.url()))
		some := mustCLI(t, e, "keys", "create", "--account", "router", "--models", "gamma,alpha").lastLine()
		for _, prefix := range []string{"/v1", "/v3"} {
			want(t, prefix+" for a key without a list", list(t, g, all, prefix), "alpha", "beta", "gamma")
			want(t, prefix+" for a key of gamma and alpha", list(t, g, some, prefix), "alpha", "gamma")
		}
		client := openaiClient(g, some, "/v1")
		if _, err := client.Models.Get(ctx, "beta"); !isStatus(err, http.StatusNotFound) {
			t.Errorf("GET /v1/models/beta of a key that may not use it: %v, want 404", err)
		}
	})
}
