package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy"
)

const testWebhookSecret = "whsec_admin_test_0123456789"

// withPayments gives f a handler with Stripe (on stripe-mock) and an
// alert dispatcher without SMTP.
func withPayments(t *testing.T, f *fixture) {
	t.Helper()
	svc, err := payments.New(payments.Config{Store: f.store, Profile: policy.ProfileFor(policy.RevisionB),
		Stripe: &payments.StripeConfig{SecretKey: "sk_test_admin", WebhookSecret: testWebhookSecret, APIURL: testenv.StripeMock(t)}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := alerts.New(alerts.Config{Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.h.cfg
	cfg.Payments, cfg.Alerts = svc, d
	if f.h, err = New(cfg); err != nil {
		t.Fatal(err)
	}
}

func TestAccountsCarryIDsAndCanBeDisabled(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			f := newFixture(t, s.open)
			created := f.do("POST", "/admin/accounts", f.operator, `{"name":"alice","usd":"10"}`)
			var a accountJSON
			created.json(t, &a)
			if created.status != 201 || !strings.HasPrefix(a.ID, "acct_") || a.Disabled {
				t.Fatalf("create: %d %s; want 201 with an acct_ id, enabled", created.status, created.body)
			}
			key, _, err := policy.IssueKey(t.Context(), f.store, f.hasher, policy.ProfileFor(policy.RevisionB), "alice", "")
			if err != nil {
				t.Fatal(err)
			}
			if r := f.do("POST", "/admin/accounts/alice/disable", f.alice, ""); r.status != 403 || r.errCode() != "permission_denied" {
				t.Errorf("owner disabling: %d %s, want 403 permission_denied", r.status, r.body)
			}
			r := f.do("POST", "/admin/accounts/alice/disable", f.operator, "")
			r.json(t, &a)
			if r.status != 200 || !a.Disabled || a.DisabledAt == nil || a.BalanceCents != 1000 {
				t.Fatalf("disable: %d %s", r.status, r.body)
			}
			if _, err := policy.NewAuthenticator(f.store, f.hasher, nil, 0).Authenticate(t.Context(), "Bearer "+key); err == nil {
				t.Error("a disabled account's key authenticated")
			}
			var listed struct{ Data []accountJSON }
			f.do("GET", "/admin/accounts", f.operator, "").json(t, &listed)
			if len(listed.Data) != 1 || !listed.Data[0].Disabled || listed.Data[0].ID != a.ID {
				t.Errorf("listing: %+v, want alice disabled with her id", listed.Data)
			}
			if r := f.do("POST", "/admin/accounts/alice/keys", f.alice, `{}`); r.status != 409 || r.errCode() != "account_disabled" {
				t.Errorf("creating a key on a disabled account: %d %s, want 409 account_disabled", r.status, r.body)
			}
			if r := f.do("POST", "/admin/accounts/alice/enable", f.operator, ""); r.status != 200 || strings.Contains(r.body, `"disabled":true`) {
				t.Errorf("enable: %d %s", r.status, r.body)
			}
			if r := f.do("POST", "/admin/accounts/nobody/disable", f.operator, ""); r.status != 404 || r.errCode() != "account_not_found" {
				t.Errorf("disabling an unknown account: %d %s", r.status, r.body)
			}
		})
	}
}

func TestCheckoutAndReceipts(t *testing.T) {
	f := newFixture(t, stores[0].open)
	if r := f.do("GET", "/admin/me", f.alice, ""); !strings.Contains(r.body, `"can_checkout":false`) {
		t.Errorf("me without a provider: %s", r.body)
	}
	if _, err := f.store.EnsureAccount(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	if r := f.do("POST", "/admin/accounts/alice/checkout", f.alice, `{"usd":"25"}`); r.status != 501 || r.errCode() != "payments_not_configured" {
		t.Errorf("checkout without a provider: %d %s", r.status, r.body)
	}
	withPayments(t, f)
	if r := f.do("GET", "/admin/me", f.alice, ""); !strings.Contains(r.body, `"can_checkout":true`) || !strings.Contains(r.body, `"can_top_up":false`) {
		t.Errorf("me with Stripe: %s; want can_checkout, not can_top_up", r.body)
	}
	r := f.do("POST", "/admin/accounts/alice/checkout", f.alice, `{"usd":"25","return_url":"http://example.com/dashboard/"}`)
	var sess struct {
		ID, URL     string
		AmountCents int64 `json:"amount_cents"`
	}
	r.json(t, &sess)
	if r.status != 201 || !strings.HasPrefix(sess.URL, "https://checkout.stripe.com/") || sess.AmountCents != 2500 {
		t.Fatalf("checkout: %d %s", r.status, r.body)
	}
	for _, tt := range []struct{ body, code string }{
		{`{"usd":"4.99"}`, "invalid_amount"},
		{`{"usd":"25","return_url":"https://evil.example/"}`, "invalid_return_url"},
	} {
		if r := f.do("POST", "/admin/accounts/alice/checkout", f.alice, tt.body); r.status != 400 || r.errCode() != tt.code {
			t.Errorf("checkout %s: %d %s, want 400 %s", tt.body, r.status, r.body, tt.code)
		}
	}
	if r := f.do("POST", "/admin/accounts/bob/checkout", f.alice, `{"usd":"25"}`); r.status != 404 {
		t.Errorf("checkout for another's account: %d", r.status)
	}
	// Stripe's webhook needs no token: its signature is checked.
	acct, _ := f.store.AccountByName(t.Context(), "alice")
	payload, _ := json.Marshal(map[string]any{"id": "evt_admin", "object": "event", "type": "checkout.session.completed",
		"data": map[string]any{"object": map[string]any{"id": "cs_admin", "mode": "payment", "payment_status": "paid",
			"amount_total": 2500, "currency": "usd", "payment_intent": "pi_admin", "metadata": map[string]string{"switchyard_account": acct.ID}}}})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: testWebhookSecret, Timestamp: time.Now()})
	for range 3 {
		req := httptest.NewRequest("POST", "/admin/payments/stripe/webhook", strings.NewReader(string(payload)))
		req.Header.Set("Stripe-Signature", signed.Header)
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("webhook: %d %s", w.Code, w.Body)
		}
	}
	var receipts struct {
		Data []struct {
			Provider    string
			Reference   string
			AmountCents int64 `json:"amount_cents"`
		}
	}
	f.do("GET", "/admin/accounts/alice/receipts", f.alice, "").json(t, &receipts)
	if len(receipts.Data) != 1 || receipts.Data[0].Provider != "stripe" || receipts.Data[0].AmountCents != 2500 ||
		receipts.Data[0].Reference != "pay:stripe:cs_admin" {
		t.Errorf("receipts = %+v, want the one Stripe payment", receipts.Data)
	}
	// An operator's top-up may not pass for a receipt.
	if r := f.do("POST", "/admin/accounts/alice/topups", f.operator, `{"usd":"10","reference":"pay:stripe:cs_fake"}`); r.status != 400 || r.errCode() != "invalid_reference" {
		t.Errorf("operator top-up spelt as a receipt: %d %s", r.status, r.body)
	}
}

func TestAlertSettingsRoutes(t *testing.T) {
	f := newFixture(t, stores[0].open)
	withPayments(t, f)
	if _, err := f.store.EnsureAccount(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, code string }{
		{`{"below_percent":0,"webhook_url":"https://hooks.example/a"}`, "invalid_alert"},
		{`{"below_cents":500}`, "invalid_alert"},
		{`{"below_cents":500,"webhook_url":"ftp://hooks.example/a"}`, "invalid_alert"},
		{`{"below_cents":500,"email":"ops@example.com"}`, "invalid_alert"}, // no SMTP here
		{`{"below_cents":500,"below_usd":"5","webhook_url":"https://hooks.example/a"}`, "invalid_alert"},
	} {
		if r := f.do("PUT", "/admin/accounts/alice/alerts", f.alice, tt.body); r.status != 400 || r.errCode() != tt.code {
			t.Errorf("PUT %s: %d %s, want 400 %s", tt.body, r.status, r.body, tt.code)
		}
	}
	var got AlertsJSON
	r := f.do("PUT", "/admin/accounts/alice/alerts", f.alice, `{"below_usd":"5.00","below_percent":20,"webhook_url":"https://hooks.example/a"}`)
	r.json(t, &got)
	if r.status != 200 || got.BelowCents == nil || *got.BelowCents != 500 || !strings.HasPrefix(got.WebhookSecret, "whsec_") {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	secret := got.WebhookSecret
	f.do("PUT", "/admin/accounts/alice/alerts", f.alice, `{"below_cents":700,"webhook_url":"https://hooks.example/a"}`).json(t, &got)
	if got.WebhookSecret != secret || *got.ThresholdCents != 700 {
		t.Errorf("same URL: secret %q (was %q), threshold %v", got.WebhookSecret, secret, got.ThresholdCents)
	}
	f.do("PUT", "/admin/accounts/alice/alerts", f.alice, `{"below_cents":700,"webhook_url":"https://hooks.example/a","rotate_secret":true}`).json(t, &got)
	if got.WebhookSecret == secret {
		t.Error("rotate_secret kept the secret")
	}
	if r := f.do("GET", "/admin/accounts/alice/alerts/deliveries", f.alice, ""); r.status != 200 || !strings.Contains(r.body, `"data":[]`) {
		t.Errorf("deliveries: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/admin/accounts/bob/alerts", f.alice, ""); r.status != 404 {
		t.Errorf("another's alerts: %d", r.status)
	}
}
