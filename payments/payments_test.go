package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

const (
	whsec         = "whsec_test_0123456789abcdef"
	genericSecret = "generic-secret-0123456789abcdef-0123"
)

type fixture struct {
	store  storage.Store
	svc    *payments.Service
	acct   storage.Account
	mu     sync.Mutex
	debits []int64 // what OnDebit was told, in cents
}

func newFixture(t *testing.T, apiURL string) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sy.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.EnsureAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: st, acct: acct}
	svc, err := payments.New(payments.Config{
		OnDebit: func(_ context.Context, account string, cents int64) {
			if account != acct.ID {
				t.Errorf("a debit of %d told for account %q, want %q", cents, account, acct.ID)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.debits = append(f.debits, cents)
		},
		Store:   st,
		Profile: policy.ProfileFor(policy.RevisionB),
		Stripe:  &payments.StripeConfig{SecretKey: "sk_test_switchyard", WebhookSecret: whsec, APIURL: apiURL},
		Generic: &payments.GenericConfig{Secret: []byte(genericSecret)},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func (f *fixture) balance(t *testing.T) int64 {
	t.Helper()
	b, err := f.store.Balance(t.Context(), f.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stripeEvent is an event as Stripe sends it, around object.
func stripeEvent(id, typ string, object map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": "2025-07-30.basil",
		"created": time.Now().Unix(), "data": map[string]any{"object": object}})
	return b
}

// deliver POSTs payload to the Stripe webhook signed with secret at ts.
func (f *fixture) deliver(t *testing.T, payload []byte, secret string, ts time.Time) (int, map[string]any) {
	t.Helper()
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: ts})
	req := httptest.NewRequest(http.MethodPost, "/admin/payments/stripe/webhook", bytes.NewReader(payload))
	req.Header.Set("Stripe-Signature", signed.Header)
	rec := httptest.NewRecorder()
	f.svc.StripeWebhook(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func (f *fixture) completed(eventID, session, pi string, cents int64) []byte {
	return stripeEvent(eventID, "checkout.session.completed", map[string]any{
		"id": session, "object": "checkout.session", "mode": "payment", "payment_status": "paid", "status": "complete",
		"amount_total": cents, "currency": "usd", "client_reference_id": f.acct.ID, "payment_intent": pi,
		"metadata": map[string]string{"switchyard_account": f.acct.ID, "switchyard_account_name": "acme"},
	})
}

func outcome(body map[string]any) string { s, _ := body["outcome"].(string); return s }

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestCheckoutCreatesASessionOnStripe(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	sess, err := f.svc.Checkout(t.Context(), f.acct, 2500, "https://gw.example/dashboard/?checkout=done", "https://gw.example/dashboard/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.ID, "cs_") || !strings.HasPrefix(sess.URL, "https://checkout.stripe.com/") {
		t.Errorf("Checkout = %+v, want a cs_ session with a Checkout URL", sess)
	}
	for _, cents := range []int64{499, 100001} {
		if _, err := f.svc.Checkout(t.Context(), f.acct, cents, "https://x/", "https://x/"); apierror.From(err).Code != "invalid_amount" {
			t.Errorf("Checkout of %d cents: %v, want invalid_amount", cents, err)
		}
	}
	disabled := f.acct
	disabled.DisabledAt = time.Now()
	if _, err := f.svc.Checkout(t.Context(), disabled, 2500, "https://x/", "https://x/"); apierror.From(err).Code != "account_disabled" {
		t.Errorf("Checkout for a disabled account: %v, want account_disabled", err)
	}
	if f.balance(t) != 0 {
		t.Errorf("creating sessions changed the balance to %d", f.balance(t))
	}
}

func TestCheckoutProviderDown(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	down.Close()
	f := newFixture(t, down.URL)
	_, err := f.svc.Checkout(t.Context(), f.acct, 2500, "https://x/", "https://x/")
	if ae := apierror.From(err); ae.Status != http.StatusBadGateway || ae.Code != "payment_provider_error" {
		t.Errorf("Checkout with Stripe unreachable: %v, want 502 payment_provider_error", err)
	}
}

func TestStripeWebhookReplayedTenTimesCreditsOnce(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	payload := f.completed("evt_paid", "cs_test_1", "pi_1", 2500)
	for i := range 10 {
		code, body := f.deliver(t, payload, whsec, time.Now())
		want := "duplicate"
		if i == 0 {
			want = "credited"
		}
		if code != http.StatusOK || outcome(body) != want {
			t.Errorf("delivery %d: %d %v, want 200 %s", i+1, code, body, want)
		}
	}
	// The same session's asynchronous success, and ten concurrent
	// deliveries of yet another event about it, credit nothing more.
	code, body := f.deliver(t, stripeEvent("evt_async", "checkout.session.async_payment_succeeded",
		map[string]any{"id": "cs_test_1", "mode": "payment", "payment_status": "paid", "amount_total": 2500, "currency": "usd",
			"payment_intent": "pi_1", "metadata": map[string]string{"switchyard_account": f.acct.ID}}), whsec, time.Now())
	if code != http.StatusOK || outcome(body) != "already_applied" {
		t.Errorf("async success of a credited session: %d %v, want already_applied", code, body)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.deliver(t, f.completed("evt_again", "cs_test_1", "pi_1", 2500), whsec, time.Now())
		}()
	}
	wg.Wait()
	if b := f.balance(t); b != 2500 {
		t.Errorf("balance = %d, want 2500 credited once", b)
	}
	receipts, err := f.store.Receipts(t.Context(), f.acct.ID, 0)
	if err != nil || len(receipts) != 1 || receipts[0].Reference != "pay:stripe:cs_test_1" || receipts[0].AmountCents != 2500 {
		t.Errorf("receipts = %+v, %v; want one of $25.00 referencing the session", receipts, err)
	}
}

func TestStripeWebhookRefusals(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	payload := f.completed("evt_x", "cs_test_x", "pi_x", 2500)
	tests := []struct {
		name    string
		payload []byte
		secret  string
		at      time.Time
		code    string
	}{
		{"another secret", payload, "whsec_other", time.Now(), "invalid_signature"},
		{"stale timestamp", payload, whsec, time.Now().Add(-10 * time.Minute), "signature_too_old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.deliver(t, tt.payload, tt.secret, tt.at)
			if code != http.StatusBadRequest || errCode(body) != tt.code {
				t.Errorf("got %d %v, want 400 %s", code, body, tt.code)
			}
		})
	}
	t.Run("body changed after signing", func(t *testing.T) {
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec})
		forged := bytes.Replace(payload, []byte(`"amount_total":2500`), []byte(`"amount_total":99999`), 1)
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(forged))
		req.Header.Set("Stripe-Signature", signed.Header)
		rec := httptest.NewRecorder()
		f.svc.StripeWebhook(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "invalid_signature") {
			t.Errorf("got %d %s, want 400 invalid_signature", rec.Code, rec.Body)
		}
	})
	t.Run("no signature", func(t *testing.T) {
		rec := httptest.NewRecorder()
		f.svc.StripeWebhook(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(payload)))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("got %d %s, want 400", rec.Code, rec.Body)
		}
	})
	if b := f.balance(t); b != 0 {
		t.Errorf("refused deliveries moved the balance to %d", b)
	}
	// The refused event was not recorded: signed properly, it credits.
	if code, body := f.deliver(t, payload, whsec, time.Now()); code != http.StatusOK || outcome(body) != "credited" {
		t.Errorf("the same event signed properly: %d %v, want credited", code, body)
	}
}

func TestStripeWebhookIgnores(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"unknown event type", stripeEvent("evt_c", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}), "ignored"},
		{"a session of another product", stripeEvent("evt_o", "checkout.session.completed", map[string]any{
			"id": "cs_other", "mode": "payment", "payment_status": "paid", "amount_total": 5000, "currency": "usd"}), "ignored"},
		{"not paid yet", stripeEvent("evt_u", "checkout.session.completed", map[string]any{
			"id": "cs_async", "mode": "payment", "payment_status": "unpaid", "amount_total": 5000, "currency": "usd",
			"metadata": map[string]string{"switchyard_account": f.acct.ID}}), "awaiting_payment"},
		{"another currency", stripeEvent("evt_eur", "checkout.session.completed", map[string]any{
			"id": "cs_eur", "mode": "payment", "payment_status": "paid", "amount_total": 5000, "currency": "eur",
			"metadata": map[string]string{"switchyard_account": f.acct.ID}}), "wrong_currency"},
		{"a refund of a payment made elsewhere", stripeEvent("evt_rf", "refund.created", map[string]any{
			"id": "re_foreign", "object": "refund", "amount": 700, "currency": "usd", "status": "succeeded", "payment_intent": "pi_foreign"}), "ignored"},
		{"a dispute won", stripeEvent("evt_dw", "charge.dispute.closed", map[string]any{
			"id": "dp_won", "object": "dispute", "amount": 700, "status": "won", "payment_intent": "pi_1"}), "ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.deliver(t, tt.payload, whsec, time.Now())
			if code != http.StatusOK || outcome(body) != tt.want {
				t.Errorf("got %d %v, want 200 %s", code, body, tt.want)
			}
		})
	}
	if b := f.balance(t); b != 0 {
		t.Errorf("ignored events moved the balance to %d", b)
	}
	// The session paid later is credited by its async success.
	code, body := f.deliver(t, stripeEvent("evt_async_ok", "checkout.session.async_payment_succeeded", map[string]any{
		"id": "cs_async", "mode": "payment", "payment_status": "paid", "amount_total": 5000, "currency": "usd",
		"payment_intent": "pi_async", "metadata": map[string]string{"switchyard_account": f.acct.ID}}), whsec, time.Now())
	if code != http.StatusOK || outcome(body) != "credited" || f.balance(t) != 5000 {
		t.Errorf("async success: %d %v, balance %d; want credited, 5000", code, body, f.balance(t))
	}
}

func TestStripeRefundsAndDisputesDebit(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	if code, _ := f.deliver(t, f.completed("evt_p", "cs_test_r", "pi_r", 1000), whsec, time.Now()); code != http.StatusOK {
		t.Fatal("payment not taken")
	}
	// Spend most of it, then refund it all: the balance goes below zero.
	if _, err := f.store.Post(t.Context(), storage.Entry{AccountID: f.acct.ID, AmountCents: -800, Kind: storage.EntryCharge, Reference: "req:1"}); err != nil {
		t.Fatal(err)
	}
	refund := func(evt, typ, status string) []byte {
		return stripeEvent(evt, typ, map[string]any{"id": "re_1", "object": "refund", "amount": 1000, "currency": "usd",
			"status": status, "payment_intent": "pi_r"})
	}
	for i := range 3 {
		if code, body := f.deliver(t, refund("evt_r1", "refund.created", "succeeded"), whsec, time.Now()); code != http.StatusOK ||
			(i == 0 && outcome(body) != "debited") {
			t.Errorf("refund delivery %d: %d %v", i+1, code, body)
		}
	}
	if code, body := f.deliver(t, refund("evt_r2", "charge.refund.updated", "succeeded"), whsec, time.Now()); code != http.StatusOK || outcome(body) != "already_applied" {
		t.Errorf("another event about the refund: %d %v, want already_applied", code, body)
	}
	if b := f.balance(t); b != -800 {
		t.Errorf("after the refund balance = %d, want -800", b)
	}
	// The limiter's mirror is told of the debit once, not per delivery.
	f.mu.Lock()
	if !slices.Equal(f.debits, []int64{1000}) {
		t.Errorf("debits told: %v, want [1000]", f.debits)
	}
	f.mu.Unlock()
	// A charge.refunded event without its refunds: they are asked of
	// Stripe (stripe-mock answers one refund of $1.00).
	code, body := f.deliver(t, stripeEvent("evt_cr", "charge.refunded", map[string]any{"id": "ch_1", "object": "charge",
		"amount": 1000, "amount_refunded": 1000, "currency": "usd", "payment_intent": "pi_r", "refunded": true}), whsec, time.Now())
	if code != http.StatusOK || outcome(body) != "debited" || f.balance(t) != -900 {
		t.Errorf("charge.refunded: %d %v, balance %d; want debited, -900", code, body, f.balance(t))
	}
	// A lost dispute debits its amount once.
	for range 2 {
		f.deliver(t, stripeEvent("evt_dl", "charge.dispute.closed", map[string]any{"id": "dp_1", "object": "dispute",
			"amount": 300, "currency": "usd", "status": "lost", "payment_intent": "pi_r"}), whsec, time.Now())
	}
	if b := f.balance(t); b != -1200 {
		t.Errorf("after a lost dispute balance = %d, want -1200", b)
	}
	// A refund that failed is debited and credited back, whichever of
	// its events comes first.
	f.deliver(t, stripeEvent("evt_f1", "refund.failed", map[string]any{"id": "re_2", "object": "refund", "amount": 200,
		"currency": "usd", "status": "failed", "payment_intent": "pi_r"}), whsec, time.Now())
	f.deliver(t, stripeEvent("evt_f0", "refund.created", map[string]any{"id": "re_2", "object": "refund", "amount": 200,
		"currency": "usd", "status": "pending", "payment_intent": "pi_r"}), whsec, time.Now())
	if b := f.balance(t); b != -1200 {
		t.Errorf("after a failed refund balance = %d, want -1200 unchanged", b)
	}
}

// deliverGeneric POSTs body to the generic webhook signed at ts.
func (f *fixture) deliverGeneric(t *testing.T, body string, secret string, ts time.Time) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/admin/payments/generic/webhook", strings.NewReader(body))
	req.Header.Set(hmacsig.Header, hmacsig.Sign([]byte(secret), ts, []byte(body)))
	rec := httptest.NewRecorder()
	f.svc.GenericWebhook(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestGenericWebhook(t *testing.T) {
	f := newFixture(t, testenv.StripeMock(t))
	paid := `{"id":"evt-1","type":"payment.succeeded","account":"acme","payment_id":"inv-42","amount_cents":2500,"currency":"usd"}`
	refund := `{"id":"evt-2","type":"payment.refunded","payment_id":"inv-42","refund_id":"cr-7","amount_cents":1000}`

	if code, body := f.deliverGeneric(t, refund, genericSecret, time.Now()); code != http.StatusConflict || errCode(body) != "payment_not_found" {
		t.Errorf("refund before its payment: %d %v, want 409 payment_not_found", code, body)
	}
	for i := range 10 {
		if code, _ := f.deliverGeneric(t, paid, genericSecret, time.Now()); code != http.StatusOK {
			t.Errorf("delivery %d: %d", i+1, code)
		}
	}
	if b := f.balance(t); b != 2500 {
		t.Errorf("ten deliveries: balance %d, want 2500", b)
	}
	// Another event id about the same payment credits nothing more.
	again := strings.Replace(paid, `"evt-1"`, `"evt-1b"`, 1)
	if code, body := f.deliverGeneric(t, again, genericSecret, time.Now()); code != http.StatusOK || outcome(body) != "already_applied" {
		t.Errorf("second event about inv-42: %d %v, want already_applied", code, body)
	}
	for range 3 {
		f.deliverGeneric(t, refund, genericSecret, time.Now())
	}
	if b := f.balance(t); b != 1500 {
		t.Errorf("after the refund: balance %d, want 1500", b)
	}
	tests := []struct {
		name   string
		body   string
		secret string
		at     time.Time
		status int
		code   string
	}{
		{"wrong secret", paid, "another-secret-0123456789abcdef-0123", time.Now(), 400, "invalid_signature"},
		{"stale", strings.Replace(paid, "evt-1", "evt-9", 1), genericSecret, time.Now().Add(-6 * time.Minute), 400, "signature_too_old"},
		{"from the future", strings.Replace(paid, "evt-1", "evt-9", 1), genericSecret, time.Now().Add(6 * time.Minute), 400, "signature_too_old"},
		{"unknown account", `{"id":"evt-3","type":"payment.succeeded","account":"nobody","payment_id":"inv-9","amount_cents":2500}`, genericSecret, time.Now(), 404, "account_not_found"},
		{"amount out of bounds", `{"id":"evt-4","type":"payment.succeeded","account":"acme","payment_id":"inv-10","amount_cents":100}`, genericSecret, time.Now(), 400, "invalid_amount"},
		{"unknown field", `{"id":"evt-5","type":"payment.succeeded","account":"acme","payment_id":"inv-11","amount_cents":2500,"bonus":1}`, genericSecret, time.Now(), 400, "invalid_event"},
		{"another currency", `{"id":"evt-6","type":"payment.succeeded","account":"acme","payment_id":"inv-12","amount_cents":2500,"currency":"eur"}`, genericSecret, time.Now(), 400, "invalid_event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := f.deliverGeneric(t, tt.body, tt.secret, tt.at)
			if code != tt.status || errCode(body) != tt.code {
				t.Errorf("got %d %v, want %d %s", code, body, tt.status, tt.code)
			}
		})
	}
	if b := f.balance(t); b != 1500 {
		t.Errorf("refused deliveries moved the balance to %d", b)
	}
	if code, body := f.deliverGeneric(t, `{"id":"evt-7","type":"payment.pending","payment_id":"inv-13"}`, genericSecret, time.Now()); code != 200 || outcome(body) != "ignored" {
		t.Errorf("unknown type: %d %v, want 200 ignored", code, body)
	}
}
