package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestAutoTopUpThroughTheGateway: an owner turns auto top-up on and pays
// a Checkout, which saves the card; a request's charge leaves the balance
// below the threshold, the ledger writer wakes the worker, which asks
// Stripe (stripe-mock) for an off-session payment; only Stripe's
// payment_intent.succeeded, delivered twice, credits it, once.
func TestAutoTopUpThroughTheGateway(t *testing.T) {
	_, e := scriptedEnv(t)
	e = stripeEnv(t, e)
	key := newKey(t, e, "acme")
	g := startGateway(t, e)
	owner := mustCLI(t, e, "admin", "token", "--account", "acme", "--subject", "owner@acme", "--ttl", "10m").lastLine()
	var acct struct{ ID string }
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme", owner, "", &acct)

	type autoTopUp struct {
		Enabled            bool  `json:"enabled"`
		ThresholdCents     int64 `json:"threshold_cents"`
		AmountCents        int64 `json:"amount_cents"`
		PaymentMethodSaved bool  `json:"payment_method_saved"`
		InFlight           bool  `json:"in_flight"`
		Failures           int64 `json:"failures"`
	}
	var at autoTopUp
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/autotopup", owner, "", &at)
	if at.Enabled {
		t.Fatalf("auto top-up of a new account: %+v, want off", at)
	}
	adminJSON(t, g, http.StatusOK, "PUT", "/admin/accounts/acme/autotopup", owner,
		`{"enabled":true,"threshold_usd":"25.00","amount_usd":"20.00"}`, &at)
	if !at.Enabled || at.ThresholdCents != 2500 || at.AmountCents != 2000 || at.PaymentMethodSaved {
		t.Fatalf("PUT: %+v", at)
	}

	var sess struct{ ID string }
	adminJSON(t, g, http.StatusCreated, "POST", "/admin/accounts/acme/checkout", owner, `{"usd":"25"}`, &sess)
	session := map[string]any{"id": sess.ID, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"amount_total": 2500, "currency": "usd", "customer": "cus_e2e", "client_reference_id": acct.ID,
		"payment_intent": map[string]any{"id": "pi_e2e_checkout", "object": "payment_intent", "payment_method": "pm_e2e"},
		"metadata":       map[string]string{"switchyard_account": acct.ID, "switchyard_save_payment_method": "1"}}
	if status, body := stripeDeliver(t, g, "evt_e2e_save", "checkout.session.completed", session); status != http.StatusOK {
		t.Fatalf("checkout.session.completed: %d %s", status, body)
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/autotopup", owner, "", &at)
	if !at.PaymentMethodSaved || at.InFlight || balanceCents(t, g, owner, "acme") != 2500 {
		t.Fatalf("after the Checkout: %+v, balance %d; want the card saved and $25.00", at, balanceCents(t, g, owner, "acme"))
	}

	// One charge takes the balance below $25.00.
	if status, _, body := g.do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
		t.Fatalf("request: %d %s", status, body)
	}
	waitFor(t, "an auto top-up attempt", func() bool {
		adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/autotopup", owner, "", &at)
		return at.InFlight
	})
	charged := balanceCents(t, g, owner, "acme")
	if charged >= 2500 {
		t.Fatalf("balance %d after the charge, want below 2500", charged)
	}

	succeeded := map[string]any{"id": "pi_e2e_auto", "object": "payment_intent", "amount": 2000, "amount_received": 2000,
		"currency": "usd", "status": "succeeded", "customer": "cus_e2e", "payment_method": "pm_e2e",
		"metadata": map[string]string{"switchyard_account": acct.ID, "switchyard_auto_topup": "autotopup:" + acct.ID + ":1"}}
	for range 2 {
		if status, body := stripeDeliver(t, g, "evt_e2e_auto", "payment_intent.succeeded", succeeded); status != http.StatusOK {
			t.Fatalf("payment_intent.succeeded: %d %s", status, body)
		}
	}
	if got := balanceCents(t, g, owner, "acme"); got != charged+2000 {
		t.Errorf("balance %d after the auto top-up's event twice, want %d", got, charged+2000)
	}
	adminJSON(t, g, http.StatusOK, "GET", "/admin/accounts/acme/autotopup", owner, "", &at)
	if at.InFlight || at.Failures != 0 || !at.Enabled {
		t.Errorf("after the credit: %+v", at)
	}

	// The CLI reads the same.
	out := mustCLI(t, e, "accounts", "autotopup", "show", "--account", "acme", "--json")
	var cli autoTopUp
	if err := json.Unmarshal([]byte(out.stdout), &cli); err != nil || cli != at {
		t.Errorf("accounts autotopup show --json = %q (%v), want %+v", out.stdout, err, at)
	}
}
