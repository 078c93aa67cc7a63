package payments_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// stripeCall is one request the gateway made to Stripe's API.
type stripeCall struct {
	method, path, idempotencyKey string
	form                         url.Values
}

// recorder passes requests on to stripe-mock and keeps them.
type recorder struct {
	mu       sync.Mutex
	calls    []stripeCall
	onIntent func() // called after a PaymentIntent was created, when set
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	form, _ := url.ParseQuery(string(body))
	r.mu.Lock()
	r.calls = append(r.calls, stripeCall{req.Method, req.URL.Path, req.Header.Get("Idempotency-Key"), form})
	r.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	r.mu.Lock()
	on := r.onIntent
	r.mu.Unlock()
	if on != nil && req.Method == http.MethodPost && req.URL.Path == "/v1/payment_intents" {
		on()
	}
	return resp, err
}

func (r *recorder) to(method, path string) []stripeCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []stripeCall
	for _, c := range r.calls {
		if c.method == method && c.path == path {
			out = append(out, c)
		}
	}
	return out
}

type autoFixture struct {
	*fixture
	at    storage.AutoTopUps
	rec   *recorder
	now   time.Time
	clock sync.Mutex
}

// newAutoFixture is acme with $4.00, auto top-up at $5.00 for $20.00
// (on when enabled) and a saved card.
func newAutoFixture(t *testing.T, enabled bool) *autoFixture {
	t.Helper()
	return newAutoFixtureAt(t, enabled, testenv.StripeMock(t))
}

func newAutoFixtureAt(t *testing.T, enabled bool, apiURL string) *autoFixture {
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
	f := &autoFixture{fixture: &fixture{store: st, acct: acct}, rec: &recorder{}, now: time.Now()}
	f.at = storage.Store(st).(storage.AutoTopUps)
	svc, err := payments.New(payments.Config{
		Store:   st,
		Profile: policy.ProfileFor(policy.RevisionB),
		Now:     func() time.Time { f.clock.Lock(); defer f.clock.Unlock(); return f.now },
		Stripe: &payments.StripeConfig{SecretKey: "sk_test_switchyard", WebhookSecret: whsec, APIURL: apiURL,
			HTTPClient: &http.Client{Transport: f.rec, Timeout: 10 * time.Second}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := st.Post(t.Context(), storage.Entry{AccountID: acct.ID, AmountCents: 400, Kind: storage.EntryTopUp, Reference: "t1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.at.SetAutoTopUpSettings(t.Context(), acct.ID, enabled, 500, 2000); err != nil {
		t.Fatal(err)
	}
	if err := f.at.SaveAutoTopUpPaymentMethod(t.Context(), acct.ID, "cus_test_1", "pm_card_visa"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *autoFixture) advance(d time.Duration) {
	f.clock.Lock()
	f.now = f.now.Add(d)
	f.clock.Unlock()
}

func (f *autoFixture) intentEvent(eventID, typ, pi, key string, cents int64) []byte {
	obj := map[string]any{"id": pi, "object": "payment_intent", "amount": cents, "amount_received": cents, "currency": "usd",
		"status": "succeeded", "customer": "cus_test_1", "payment_method": "pm_card_visa",
		"metadata": map[string]string{"switchyard_account": f.acct.ID, "switchyard_auto_topup": key}}
	if typ == "payment_intent.payment_failed" {
		obj["status"], obj["amount_received"] = "requires_payment_method", 0
		obj["last_payment_error"] = map[string]any{"type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds",
			"message": "Your card has insufficient funds."}
	}
	return stripeEvent(eventID, typ, obj)
}

func TestAutoTopUpOffByDefaultDoesNothing(t *testing.T) {
	f := newAutoFixture(t, false)
	w := f.svc.AutoTopUps()
	if w.Check(t.Context(), f.acct.ID) {
		t.Error("Check asked Stripe for a payment with auto top-up off")
	}
	w.Sweep(t.Context())
	if calls := f.rec.to(http.MethodPost, "/v1/payment_intents"); len(calls) != 0 {
		t.Errorf("%d PaymentIntents created with auto top-up off", len(calls))
	}
	// A Checkout does not save the card either.
	if _, err := f.svc.Checkout(t.Context(), f.acct, 2500, "https://x/", "https://x/"); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.rec.to(http.MethodPost, "/v1/checkout/sessions") {
		if c.form.Get("customer") != "" || c.form.Get("payment_intent_data[setup_future_usage]") != "" {
			t.Errorf("a Checkout with auto top-up off saves the card: %v", c.form)
		}
	}
	if b := f.balance(t); b != 400 {
		t.Errorf("balance = %d, want 400", b)
	}
}

func TestAutoTopUpThresholdCrossedConcurrentlyMakesOnePaymentIntent(t *testing.T) {
	f := newAutoFixture(t, true)
	w := f.svc.AutoTopUps()
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Check(t.Context(), f.acct.ID)
		}()
	}
	wg.Wait()
	w.Sweep(t.Context())
	calls := f.rec.to(http.MethodPost, "/v1/payment_intents")
	if len(calls) != 1 {
		t.Fatalf("%d PaymentIntents created by 20 concurrent checks and a sweep, want 1", len(calls))
	}
	c := calls[0]
	want := map[string]string{"amount": "2000", "currency": "usd", "confirm": "true", "off_session": "true",
		"customer": "cus_test_1", "payment_method": "pm_card_visa", "metadata[switchyard_account]": f.acct.ID,
		"metadata[switchyard_auto_topup]": "autotopup:" + f.acct.ID + ":1"}
	for k, v := range want {
		if got := c.form.Get(k); got != v {
			t.Errorf("PaymentIntent %s = %q, want %q", k, got, v)
		}
	}
	if c.idempotencyKey != "autotopup:"+f.acct.ID+":1" {
		t.Errorf("Idempotency-Key = %q", c.idempotencyKey)
	}
	got, err := f.at.AutoTopUp(t.Context(), f.acct.ID)
	if err != nil || got.InFlight == "" || got.PaymentID == "" {
		t.Errorf("after the request: %+v, %v; want the attempt in flight with its PaymentIntent", got, err)
	}
	// Nothing is credited before Stripe's event.
	if b := f.balance(t); b != 400 {
		t.Errorf("balance = %d before the webhook, want 400", b)
	}
}

func TestAutoTopUpWebhookReplayedCreditsOnce(t *testing.T) {
	f := newAutoFixture(t, true)
	w := f.svc.AutoTopUps()
	if !w.Check(t.Context(), f.acct.ID) {
		t.Fatal("no attempt started below the threshold")
	}
	key := "autotopup:" + f.acct.ID + ":1"
	payload := f.intentEvent("evt_pi_ok", "payment_intent.succeeded", "pi_auto_1", key, 2000)
	for i := range 5 {
		code, body := f.deliver(t, payload, whsec, time.Now())
		want := "duplicate"
		if i == 0 {
			want = "credited"
		}
		if code != http.StatusOK || outcome(body) != want {
			t.Errorf("delivery %d: %d %v, want 200 %s", i+1, code, body, want)
		}
	}
	// Another event about the same PaymentIntent credits nothing more.
	if code, body := f.deliver(t, f.intentEvent("evt_pi_ok2", "payment_intent.succeeded", "pi_auto_1", key, 2000), whsec, time.Now()); code != http.StatusOK || outcome(body) != "already_applied" {
		t.Errorf("second event of the PaymentIntent: %d %v", code, body)
	}
	if b := f.balance(t); b != 2400 {
		t.Errorf("balance = %d, want 2400 (credited once)", b)
	}
	got, err := f.at.AutoTopUp(t.Context(), f.acct.ID)
	if err != nil || got.InFlight != "" || got.Failures != 0 {
		t.Errorf("after the credit: %+v, %v; want no attempt in flight", got, err)
	}
	if w.Check(t.Context(), f.acct.ID) {
		t.Error("an attempt started above the threshold")
	}
	// A Checkout PaymentIntent's success (no attempt key) credits nothing:
	// its session's event does.
	if code, body := f.deliver(t, f.intentEvent("evt_pi_checkout", "payment_intent.succeeded", "pi_checkout", "", 2500), whsec, time.Now()); code != http.StatusOK || outcome(body) != "ignored" {
		t.Errorf("a Checkout's PaymentIntent event: %d %v, want ignored", code, body)
	}
	if b := f.balance(t); b != 2400 {
		t.Errorf("balance = %d, want 2400", b)
	}
}

func TestAutoTopUpFailuresTurnItOffAfterN(t *testing.T) {
	f := newAutoFixture(t, true)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID,
		WebhookURL: "https://hooks.example/alerts", WebhookSecret: "whsec_x"}); err != nil {
		t.Fatal(err)
	}
	w := f.svc.AutoTopUps()
	for i := 1; i <= storage.AutoTopUpMaxFailures; i++ {
		if !w.Check(t.Context(), f.acct.ID) {
			t.Fatalf("attempt %d did not start", i)
		}
		key := "autotopup:" + f.acct.ID + ":" + string(rune('0'+i))
		payload := f.intentEvent("evt_fail_"+string(rune('0'+i)), "payment_intent.payment_failed", "pi_fail_"+string(rune('0'+i)), key, 2000)
		for range 2 { // a replay counts once
			if code, body := f.deliver(t, payload, whsec, time.Now()); code != http.StatusOK {
				t.Fatalf("failure %d: %d %v", i, code, body)
			}
		}
		if w.Check(t.Context(), f.acct.ID) {
			t.Fatalf("an attempt started right after failure %d", i)
		}
		f.advance(2 * time.Hour)
	}
	got, err := f.at.AutoTopUp(t.Context(), f.acct.ID)
	if err != nil || got.Enabled || got.Failures != storage.AutoTopUpMaxFailures ||
		got.LastError != "card_declined (insufficient_funds): Your card has insufficient funds." {
		t.Fatalf("after %d failures: %+v, %v; want off", storage.AutoTopUpMaxFailures, got, err)
	}
	if w.Check(t.Context(), f.acct.ID) {
		t.Error("an attempt started with auto top-up turned off")
	}
	if n := len(f.rec.to(http.MethodPost, "/v1/payment_intents")); n != storage.AutoTopUpMaxFailures {
		t.Errorf("%d PaymentIntents, want %d", n, storage.AutoTopUpMaxFailures)
	}
	dels, err := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dels {
		if d.Kind == storage.AlertAutoTopUpFailed {
			n++
		}
	}
	if n != storage.AutoTopUpMaxFailures {
		t.Errorf("%d auto top-up alerts, want %d", n, storage.AutoTopUpMaxFailures)
	}
	if b := f.balance(t); b != 400 {
		t.Errorf("balance = %d, want 400", b)
	}
}

func TestAutoTopUpCheckoutSavesThePaymentMethod(t *testing.T) {
	f := newAutoFixture(t, true)
	// A fresh account with auto top-up on and no customer yet.
	acct, err := f.store.EnsureAccount(t.Context(), "beta")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.at.SetAutoTopUpSettings(t.Context(), acct.ID, true, 500, 2000); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := f.svc.Checkout(t.Context(), acct, 2500, "https://x/", "https://x/"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.rec.to(http.MethodPost, "/v1/customers")); n != 1 {
		t.Errorf("%d Customers created for two Checkouts, want 1", n)
	}
	sessions := f.rec.to(http.MethodPost, "/v1/checkout/sessions")
	got, _ := f.at.AutoTopUp(t.Context(), acct.ID)
	if len(sessions) != 2 || got.CustomerID == "" {
		t.Fatalf("%d sessions, customer %q", len(sessions), got.CustomerID)
	}
	for _, c := range sessions {
		if c.form.Get("payment_intent_data[setup_future_usage]") != "off_session" || c.form.Get("customer") != got.CustomerID {
			t.Errorf("Checkout Session params %v: want setup_future_usage off_session and the customer", c.form)
		}
	}
	payload := stripeEvent("evt_cs_save", "checkout.session.completed", map[string]any{
		"id": "cs_test_save", "object": "checkout.session", "mode": "payment", "payment_status": "paid", "status": "complete",
		"amount_total": 2500, "currency": "usd", "customer": got.CustomerID,
		"payment_intent": map[string]any{"id": "pi_cs_save", "object": "payment_intent", "payment_method": "pm_saved_1"},
		"metadata":       map[string]string{"switchyard_account": acct.ID, "switchyard_save_payment_method": "1"},
	})
	if code, body := f.deliver(t, payload, whsec, time.Now()); code != http.StatusOK || outcome(body) != "credited" {
		t.Fatalf("completed: %d %v", code, body)
	}
	got, _ = f.at.AutoTopUp(t.Context(), acct.ID)
	if got.PaymentMethodID != "pm_saved_1" {
		t.Errorf("saved payment method = %q, want pm_saved_1", got.PaymentMethodID)
	}
}

func TestAutoTopUpWorkerWakesOnNotify(t *testing.T) {
	f := newAutoFixture(t, true)
	w := f.svc.AutoTopUps()
	asked := make(chan struct{}, 1)
	f.rec.onIntent = func() {
		select {
		case asked <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	w.Notify(f.acct.ID)
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not ask Stripe for a payment after Notify")
	}
	cancel()
	<-done
	if n := len(f.rec.to(http.MethodPost, "/v1/payment_intents")); n != 1 {
		t.Errorf("%d PaymentIntents, want 1", n)
	}
}

// stripeAnswering is an API that answers every PaymentIntent with status
// and body.
func stripeAnswering(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestAutoTopUpDeclinedAtOnceCountsOneFailure(t *testing.T) {
	f := newAutoFixtureAt(t, true, stripeAnswering(t, http.StatusPaymentRequired,
		`{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline","message":"Your card was declined."}}`))
	w := f.svc.AutoTopUps()
	if !w.Check(t.Context(), f.acct.ID) {
		t.Fatal("no attempt started")
	}
	got, err := f.at.AutoTopUp(t.Context(), f.acct.ID)
	if err != nil || got.InFlight != "" || got.Failures != 1 || got.LastError != "card_declined (generic_decline): Your card was declined." {
		t.Fatalf("after a decline: %+v, %v; want one failure and no attempt in flight", got, err)
	}
	// Stripe's payment_failed event about the same attempt counts nothing
	// more.
	payload := f.intentEvent("evt_declined", "payment_intent.payment_failed", "pi_declined", "autotopup:"+f.acct.ID+":1", 2000)
	if code, body := f.deliver(t, payload, whsec, time.Now()); code != http.StatusOK {
		t.Fatalf("payment_failed: %d %v", code, body)
	}
	if got, _ := f.at.AutoTopUp(t.Context(), f.acct.ID); got.Failures != 1 {
		t.Errorf("after the event of the same attempt: %d failures, want 1", got.Failures)
	}
}

func TestAutoTopUpStripeDownKeepsTheAttemptForARetry(t *testing.T) {
	f := newAutoFixtureAt(t, true, stripeAnswering(t, http.StatusInternalServerError,
		`{"error":{"type":"api_error","message":"down"}}`))
	w := f.svc.AutoTopUps()
	w.Check(t.Context(), f.acct.ID)
	got, err := f.at.AutoTopUp(t.Context(), f.acct.ID)
	if err != nil || got.InFlight != "autotopup:"+f.acct.ID+":1" || got.Failures != 0 {
		t.Fatalf("after Stripe failed: %+v, %v; want the attempt still in flight and no failure", got, err)
	}
	if w.Check(t.Context(), f.acct.ID) {
		t.Error("a second attempt started while the first is in flight")
	}
	// Once stale, the same attempt (same key) is sent again.
	f.advance(11 * time.Minute)
	if !w.Check(t.Context(), f.acct.ID) {
		t.Fatal("a stale attempt was not sent again")
	}
	keys := map[string]bool{}
	for _, c := range f.rec.to(http.MethodPost, "/v1/payment_intents") {
		keys[c.idempotencyKey] = true
	}
	if len(keys) != 1 || !keys["autotopup:"+f.acct.ID+":1"] {
		t.Errorf("idempotency keys sent: %v, want only the first attempt's", keys)
	}
}
