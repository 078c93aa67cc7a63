package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// adminJSON does an admin API request and decodes its answer into v
// (when not nil), failing the test on a status other than want.
func adminJSON(t *testing.T, g *gateway, want int, method, path, token, body string, v any) string {
	t.Helper()
	status, _, b := g.do(method, path, token, body)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(b), v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return b
}

// TestAccountTokenCannotTopUp: an account owner's token, which may manage
// its account's keys, cannot credit its balance, however often it asks;
// an operator's token and the CLI can.
func TestAccountTokenCannotTopUp(t *testing.T) {
	_, e := scriptedEnv(t)
	g := startGateway(t, e)
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme", "--ttl", "10m").lastLine()
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts", operator, `{"name":"acme","usd":"5"}`, nil)

	for _, body := range []string{`{"usd":"1000.00"}`, `{"cents":100000,"reference":"free-money"}`, `{"usd":"5"}`} {
		status, h, b := g.do("POST", "/admin/accounts/acme/topups", owner, body)
		msg, typ, code := errorBody(t, b)
		if status != http.StatusForbidden || typ != "permission_error" || code != "permission_denied" ||
			!strings.Contains(msg, "operator") || h.Get("Content-Type") != "application/json" {
			t.Errorf("owner's top-up %s: %d %s", body, status, b)
		}
	}
	if got := balanceCents(t, g, operator, "acme"); got != 500 {
		t.Fatalf("the owner's top-ups moved the balance to %d cents", got)
	}
	var me struct {
		CanTopUp *bool `json:"can_top_up"`
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/me", owner, "", &me)
	if me.CanTopUp == nil || *me.CanTopUp {
		t.Errorf("the owner's /admin/me says can_top_up %v, want false", me.CanTopUp)
	}

	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts/acme/topups", operator, `{"usd":"10.00"}`, nil)
	mustCLI(t, e, "accounts", "topup", "--account", "acme", "--usd", "5")
	if got := balanceCents(t, g, operator, "acme"); got != 2000 {
		t.Errorf("balance after an operator's $10 and the CLI's $5 on $5: %d cents, want 2000", got)
	}
}

// TestTopUpReferenceConflict: a top-up reference posted again for the
// same amount is a retry (200, the first entry); for another amount it
// is refused, by the admin API with 409 reference_conflict and by the
// CLI with an exit status, and changes nothing.
func TestTopUpReferenceConflict(t *testing.T) {
	_, e := scriptedEnv(t)
	g := startGateway(t, e)
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts", operator, `{"name":"acme"}`, nil)

	var first, again struct {
		Entry struct {
			ID          string `json:"id"`
			AmountCents int64  `json:"amount_cents"`
		} `json:"entry"`
	}
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts/acme/topups", operator, `{"usd":"25.00","reference":"inv-7"}`, &first)
	adminJSON(t, g, http.StatusOK, "POST", "/admin/accounts/acme/topups", operator, `{"cents":2500,"reference":"inv-7"}`, &again)
	if again.Entry != first.Entry {
		t.Errorf("the retry answered %+v, want the first entry %+v", again.Entry, first.Entry)
	}
	status, _, b := g.do("POST", "/admin/accounts/acme/topups", operator, `{"usd":"250.00","reference":"inv-7"}`)
	if _, _, code := errorBody(t, b); status != http.StatusConflict || code != "reference_conflict" {
		t.Errorf("inv-7 for $250: %d %s, want 409 reference_conflict", status, b)
	}
	r := cli(t, e, "accounts", "topup", "--account", "acme", "--usd", "30", "--reference", "inv-7")
	if r.code == 0 || !strings.Contains(r.stderr, "inv-7") {
		t.Errorf("CLI top-up of inv-7 for $30: exit %d, stderr %q; want a refusal naming the reference", r.code, r.stderr)
	}
	if got := balanceCents(t, g, operator, "acme"); got != 2500 {
		t.Errorf("balance %d cents after one $25 top-up and its replays, want 2500", got)
	}
}

// TestTopUpSpeltLikeAChargeIsNotOne reproduces, against the real binary
// on both storage modes, a top-up whose reference is req:<the id the
// gateway echoes as X-Request-Id> of a stream in flight that sent none:
// once its charge id, now an id of its own. That request must still be
// charged what it cost, in an entry of its own whose reference is not
// the echoed id's, whether the top-up is refused or posted; and the
// gateway must live on.
func TestTopUpSpeltLikeAChargeIsNotOne(t *testing.T) {
	for _, mode := range []string{"embedded", "distributed"} {
		t.Run(mode, func(t *testing.T) {
			up := testupstream.Start(t, demobackend.Options{InterTokenDelay: 50 * time.Millisecond})
			e := embeddedEnv(t, up.URL())
			if mode == "distributed" {
				e = distributedEnv(t, up.URL()).with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("j", 40))
			}
			key := fundedKey(t, e, "acme")
			g := startGateway(t, e)
			operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
			start := balanceCents(t, g, operator, "acme")

			up.Enqueue(testupstream.Text(strings.Repeat("word ", 30)))
			req := newRequest(t, g, "POST", "/v1/chat/completions", key,
				`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			requestID := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != http.StatusOK || requestID == "" {
				t.Fatalf("stream: %d, X-Request-Id %q", resp.StatusCode, requestID)
			}
			// The stream is still running: its charge is not written yet.
			status, _, topUp := g.do("POST", "/admin/accounts/acme/topups", operator,
				`{"usd":"5.00","reference":"req:`+requestID+`"}`)
			credited := int64(0)
			switch status {
			case http.StatusCreated:
				credited = 500
			case http.StatusBadRequest:
				if _, _, code := errorBody(t, topUp); code != "invalid_reference" {
					t.Errorf("top-up spelt like the charge: %d %s", status, topUp)
				}
			default:
				t.Fatalf("top-up spelt like the charge: %d %s", status, topUp)
			}
			sc := bufio.NewScanner(resp.Body)
			done := false
			for sc.Scan() {
				done = done || sc.Text() == "data: [DONE]"
			}
			if !done {
				t.Fatalf("the stream did not end with [DONE]: %v", sc.Err())
			}
			settleLedgers(t)

			var ledger struct {
				Data []struct {
					Kind        string `json:"kind"`
					AmountCents int64  `json:"amount_cents"`
					Reference   string `json:"reference"`
				} `json:"data"`
			}
			adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/ledger", operator, "", &ledger)
			var charge int64
			var charges int
			for _, le := range ledger.Data {
				if le.Kind == "charge" {
					charge, charges = -le.AmountCents, charges+1
					if le.Reference == "req:"+requestID {
						t.Errorf("the charge's reference %s is the echoed request id's", le.Reference)
					}
				}
			}
			if charges != 1 || charge <= 0 {
				t.Fatalf("the stream's charge: %d entries, %d cents; want one debit. Ledger: %+v", charges, charge, ledger.Data)
			}
			var usage struct {
				Data []struct {
					Requests  int64 `json:"requests"`
					CostCents int64 `json:"cost_cents"`
				} `json:"data"`
			}
			adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/usage", operator, "", &usage)
			if len(usage.Data) != 1 || usage.Data[0].Requests != 1 || usage.Data[0].CostCents != charge {
				t.Errorf("usage %+v; want the one request at %d cents", usage.Data, charge)
			}
			if got, want := balanceCents(t, g, operator, "acme"), start+credited-charge; got != want {
				t.Errorf("balance %d cents, want %d + %d credited - %d charged = %d", got, start, credited, charge, want)
			}
			select {
			case <-g.done:
				t.Fatalf("the gateway exited:\n%s", g.log.String())
			default:
			}
		})
	}
}
