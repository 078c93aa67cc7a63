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

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

const e2eWebhookSecret = "whsec_e2e_0123456789abcdef"

// stripeEnv turns Stripe on, with stripe-mock for its API.
func stripeEnv(t *testing.T, e env) env {
	t.Helper()
	return e.with(
		"SWITCHYARD_STRIPE_SECRET_KEY", "sk_test_e2e",
		"SWITCHYARD_STRIPE_WEBHOOK_SECRET", e2eWebhookSecret,
		"SWITCHYARD_STRIPE_API_URL", testenv.StripeMock(t),
	)
}

// stripeDeliver POSTs a Stripe event about object to the gateway's
// webhook, signed as Stripe signs it.
func stripeDeliver(t *testing.T, g *gateway, id, typ string, object map[string]any) (int, string) {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": "2025-07-30.basil",
		"data": map[string]any{"object": object}})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: e2eWebhookSecret, Timestamp: time.Now()})
	req := newRequest(t, g, "POST", "/admin/payments/stripe/webhook", "", string(payload))
	req.Header.Set("Stripe-Signature", signed.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStripeTopUpRefundAndAdmission: an owner starts a Checkout, Stripe
// confirms it ten times, the balance rises once; a full refund and a lost
// dispute leave it below zero, and the key is then refused with 402.
func TestStripeTopUpRefundAndAdmission(t *testing.T) {
	_, e := scriptedEnv(t)
	e = stripeEnv(t, e)
	key := newKey(t, e, "acme")
	g := startGateway(t, e)
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme", "--ttl", "10m").lastLine()

	var me struct {
		CanCheckout bool `json:"can_checkout"`
		CanTopUp    bool `json:"can_top_up"`
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/me", owner, "", &me)
	if !me.CanCheckout || me.CanTopUp {
		t.Fatalf("/admin/me = %+v, want can_checkout and not can_top_up", me)
	}
	var sess struct{ ID, URL string }
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts/acme/checkout", owner, `{"usd":"25"}`, &sess)
	if !strings.HasPrefix(sess.URL, "https://checkout.stripe.com/") {
		t.Fatalf("checkout URL %q", sess.URL)
	}
	if status, _, _ := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusPaymentRequired {
		t.Fatalf("before the payment is confirmed: %d, want 402", status)
	}

	var acct struct{ ID string }
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme", owner, "", &acct)
	session := map[string]any{"id": sess.ID, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"amount_total": 2500, "currency": "usd", "payment_intent": "pi_e2e", "client_reference_id": acct.ID,
		"metadata": map[string]string{"switchyard_account": acct.ID}}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, body := stripeDeliver(t, g, "evt_e2e_paid", "checkout.session.completed", session); status != http.StatusOK {
				t.Errorf("delivery: %d %s", status, body)
			}
		}()
	}
	wg.Wait()
	if got := balanceCents(t, g, owner, "acme"); got != 2500 {
		t.Fatalf("after ten deliveries the balance is %d cents, want 2500", got)
	}

	// A bad signature changes nothing.
	payload := `{"id":"evt_forged","object":"event","type":"checkout.session.completed","data":{"object":{}}}`
	req := newRequest(t, g, "POST", "/admin/payments/stripe/webhook", "", payload)
	req.Header.Set("Stripe-Signature", "t=1,v1=00")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("forged delivery: %v %v, want 400", resp, err)
	} else {
		resp.Body.Close()
	}

	// Refunded in full, then a dispute lost: below zero, and refused.
	if status, body := stripeDeliver(t, g, "evt_e2e_refund", "refund.created", map[string]any{"id": "re_e2e", "object": "refund",
		"amount": 2500, "currency": "usd", "status": "succeeded", "payment_intent": "pi_e2e"}); status != http.StatusOK {
		t.Fatalf("refund: %d %s", status, body)
	}
	if status, body := stripeDeliver(t, g, "evt_e2e_dispute", "charge.dispute.closed", map[string]any{"id": "dp_e2e", "object": "dispute",
		"amount": 500, "currency": "usd", "status": "lost", "payment_intent": "pi_e2e"}); status != http.StatusOK {
		t.Fatalf("dispute: %d %s", status, body)
	}
	if got := balanceCents(t, g, owner, "acme"); got != -500 {
		t.Fatalf("after the refund and the dispute the balance is %d cents, want -500", got)
	}
	status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody)
	if _, typ, _ := errorBody(t, body); status != http.StatusPaymentRequired || typ != "insufficient_quota" {
		t.Errorf("with a negative balance: %d %s, want 402 insufficient_quota", status, body)
	}
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts/acme/topups", operator, `{"usd":"10"}`, nil)
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
		t.Errorf("back above zero: %d %s", status, body)
	}

	var receipts struct {
		Data []struct {
			Kind        string
			Provider    string
			AmountCents int64 `json:"amount_cents"`
		}
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/receipts", owner, "", &receipts)
	if len(receipts.Data) != 3 || receipts.Data[0].AmountCents != -500 || receipts.Data[1].AmountCents != -2500 ||
		receipts.Data[2].AmountCents != 2500 || receipts.Data[2].Provider != "stripe" {
		t.Errorf("receipts = %+v, want the dispute, the refund and the payment, not the operator's top-up", receipts.Data)
	}
}

// TestGenericProviderCreditsOnce: the generic provider's signed webhook,
// replayed, credits once; a stale signature is refused.
func TestGenericProviderCreditsOnce(t *testing.T) {
	secret := strings.Repeat("g", 40)
	_, e := scriptedEnv(t, "SWITCHYARD_PAYMENTS_WEBHOOK_SECRET", secret)
	g := startGateway(t, e)
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()
	mustCLI(t, e, "accounts", "create", "--account", "acme")
	body := `{"id":"evt-1","type":"payment.succeeded","account":"acme","payment_id":"inv-1","amount_cents":1200,"currency":"usd"}`
	send := func(at time.Time) int {
		req := newRequest(t, g, "POST", "/admin/payments/generic/webhook", "", body)
		req.Header.Set(hmacsig.Header, hmacsig.Sign([]byte(secret), at, []byte(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := send(time.Now().Add(-10 * time.Minute)); status != http.StatusBadRequest {
		t.Errorf("stale delivery: %d, want 400", status)
	}
	for i := range 10 {
		if status := send(time.Now()); status != http.StatusOK {
			t.Errorf("delivery %d: %d", i+1, status)
		}
	}
	if got := balanceCents(t, g, operator, "acme"); got != 1200 {
		t.Errorf("balance %d cents, want 1200", got)
	}
}

// TestDisabledAccountRefusedOnEveryNode: two caching nodes on PostgreSQL
// refuse a disabled account's key once the operator disabled it, and
// accept it again once enabled.
func TestDisabledAccountRefusedOnEveryNode(t *testing.T) {
	up := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL()).with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("j", 40))
	key := fundedKey(t, e, "acme")
	cfg := withSwitchyardOption(t, "key_cache_ttl 10m")
	g1, g2 := startGateway(t, e, cfg), startGateway(t, e, cfg)
	warm(t, key, g1, g2)
	operator := mustCLI(t, e, "admin", "token", "--operator", "--ttl", "10m").lastLine()

	var a struct {
		ID       string
		Disabled bool
	}
	adminJSON(t, g1, http.StatusOK, "POST", "/admin/accounts/acme/disable", operator, "", &a)
	if !a.Disabled || !strings.HasPrefix(a.ID, "acct_") {
		t.Fatalf("disable answered %+v", a)
	}
	for i, g := range []*gateway{g2, g1} {
		waitFor(t, "the disabled account's key to be refused", func() bool {
			status, _, body := g.do("GET", "/v1/models", key, "")
			if status != http.StatusUnauthorized && status != http.StatusOK {
				t.Fatalf("node %d: %d %s", i, status, body)
			}
			return status == http.StatusUnauthorized
		})
	}
	mustCLI(t, e, "accounts", "enable", "--account", "acme")
	for _, g := range []*gateway{g1, g2} {
		waitFor(t, "the enabled account's key to work", func() bool {
			status, _, _ := g.do("GET", "/v1/models", key, "")
			return status == http.StatusOK
		})
	}
}

// TestBalanceAlertOnceAcrossNodes: concurrent requests on two nodes take
// the balance below the threshold; one signed webhook arrives.
func TestBalanceAlertOnceAcrossNodes(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	var sigs []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, sigs = append(got, b), append(sigs, r.Header.Get(hmacsig.Header))
		mu.Unlock()
	}))
	defer hook.Close()
	up := testupstream.Start(t, demobackend.Options{})
	e := distributedEnv(t, up.URL()).with("SWITCHYARD_ADMIN_JWT_SECRET", strings.Repeat("j", 40),
		"SWITCHYARD_ALERT_WEBHOOK_ALLOW", "127.0.0.0/8")
	key := fundedKey(t, e, "acme") // $10.00
	g1, g2 := startGateway(t, e), startGateway(t, e)
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--ttl", "10m").lastLine()
	var settings struct {
		WebhookSecret string `json:"webhook_secret"`
	}
	adminJSON(t, g1, http.StatusOK, "PUT", "/admin/accounts/acme/alerts", owner,
		`{"below_usd":"9.99","webhook_url":"`+hook.URL+`/alerts"}`, &settings)

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := []*gateway{g1, g2}[i%2]
			if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
				t.Errorf("request %d: %d %s", i, status, body)
			}
		}()
	}
	wg.Wait()
	waitFor(t, "the alert to be delivered", func() bool {
		var log struct{ Data []struct{ Status string } }
		adminJSON(t, g2, http.StatusOK, "GET", "/admin/accounts/acme/alerts/deliveries", owner, "", &log)
		return len(log.Data) == 1 && log.Data[0].Status == "delivered"
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d webhooks received, want 1", len(got))
	}
	if err := hmacsig.Verify(sigs[0], got[0], []byte(settings.WebhookSecret), time.Now(), hmacsig.DefaultTolerance); err != nil {
		t.Errorf("webhook signature: %v", err)
	}
	if !strings.Contains(string(got[0]), `"type":"balance.below"`) || !strings.Contains(string(got[0]), `"threshold_cents":999`) {
		t.Errorf("webhook body %s", got[0])
	}
}

// waitFor polls cond for up to 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
