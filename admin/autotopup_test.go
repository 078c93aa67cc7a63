package admin

import (
	"testing"
)

func TestAutoTopUpRoutes(t *testing.T) {
	f := newFixture(t, stores[0].open)
	if _, err := f.store.EnsureAccount(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	var got AutoTopUpJSON
	r := f.do("GET", "/admin/accounts/alice/autotopup", f.alice, "")
	r.json(t, &got)
	if r.status != 200 || got.Enabled || got.MaxFailures != 3 {
		t.Fatalf("GET of a new account: %d %s; want off", r.status, r.body)
	}
	// Without Stripe it cannot be turned on.
	if r := f.do("PUT", "/admin/accounts/alice/autotopup", f.alice, `{"enabled":true,"threshold_usd":"5.00","amount_usd":"20.00"}`); r.status != 501 || r.errCode() != "payments_not_configured" {
		t.Errorf("PUT without Stripe: %d %s, want 501 payments_not_configured", r.status, r.body)
	}
	withPayments(t, f)
	for _, body := range []string{
		`{"enabled":true,"threshold_usd":"5.00","amount_usd":"4.99"}`,   // below the revision's top-up bounds
		`{"enabled":true,"threshold_usd":"5.00","amount_cents":100001}`, // above
		`{"enabled":true,"threshold_usd":"5.00"}`,                       // no amount
		`{"enabled":true,"threshold_cents":500,"threshold_usd":"5.00","amount_usd":"20.00"}`,
		`{"enabled":true,"threshold_usd":"five","amount_usd":"20.00"}`,
		`{"enabled":true,"threshold_cents":-1,"amount_usd":"20.00"}`,
	} {
		if r := f.do("PUT", "/admin/accounts/alice/autotopup", f.alice, body); r.status != 400 || r.errCode() != "invalid_auto_topup" {
			t.Errorf("PUT %s: %d %s, want 400 invalid_auto_topup", body, r.status, r.body)
		}
	}
	if r := f.do("PUT", "/admin/accounts/alice/autotopup", f.alice, `{"enabled":true,"bogus":1}`); r.status != 400 {
		t.Errorf("PUT with an unknown field: %d %s, want 400", r.status, r.body)
	}
	r = f.do("PUT", "/admin/accounts/alice/autotopup", f.alice, `{"enabled":true,"threshold_usd":"5.00","amount_usd":"20.00"}`)
	r.json(t, &got)
	if r.status != 200 || !got.Enabled || got.ThresholdCents != 500 || got.AmountCents != 2000 || got.PaymentMethodSaved {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	got = AutoTopUpJSON{}
	f.do("GET", "/admin/accounts/alice/autotopup", f.alice, "").json(t, &got)
	if !got.Enabled || got.ThresholdCents != 500 || got.AmountCents != 2000 {
		t.Fatalf("GET after PUT: %+v", got)
	}
	if r := f.do("GET", "/admin/accounts/bob/autotopup", f.alice, ""); r.status != 404 {
		t.Errorf("GET of an account the token may not manage: %d, want 404", r.status)
	}
	if r := f.do("DELETE", "/admin/accounts/alice/autotopup", f.alice, ""); r.status != 405 {
		t.Errorf("DELETE: %d, want 405", r.status)
	}
}
