package payments

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/form"
	"github.com/stripe/stripe-go/v82/webhook"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// Metadata keys the gateway puts on its Checkout Sessions and their
// PaymentIntents: the account to credit.
const (
	metaAccount     = "switchyard_account"
	metaAccountName = "switchyard_account_name"
	// metaSaveCard marks a Checkout Session that saves its payment
	// method for auto top-ups.
	metaSaveCard = "switchyard_save_payment_method"
	// metaAutoTopUp is, on an automatic top-up's PaymentIntent, the
	// attempt's key: only PaymentIntents carrying it are credited by
	// their own payment_intent.succeeded (a Checkout's is credited by
	// its session).
	metaAutoTopUp = "switchyard_auto_topup"
)

// ProviderStripe names Stripe in payment events and references.
const ProviderStripe = "stripe"

// stripeProvider calls Stripe's API through one backend and the three
// endpoints it uses, not stripe.Client: the client links every service of
// the API and, since the binary cannot drop methods reached by reflection
// (README.md, "Binary size"), every parameter type's methods with them.
type stripeProvider struct {
	cfg      StripeConfig
	api      stripe.Backend
	payments storage.Payments
	// autoTopUps keeps saved payment methods; nil for a store without
	// them (then no Checkout saves one).
	autoTopUps storage.AutoTopUps
}

func newStripe(cfg StripeConfig, payments storage.Payments) (*stripeProvider, error) {
	if cfg.SecretKey == "" || cfg.WebhookSecret == "" {
		return nil, errors.New("payments: Stripe needs a secret key and a webhook secret")
	}
	if cfg.Currency == "" {
		cfg.Currency = "usd"
	}
	cfg.Currency = strings.ToLower(cfg.Currency)
	if cfg.ProductName == "" {
		cfg.ProductName = "Account balance"
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = webhook.DefaultTolerance
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	bc := &stripe.BackendConfig{
		HTTPClient:    cfg.HTTPClient,
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if cfg.APIURL != "" {
		bc.URL = stripe.String(strings.TrimSuffix(cfg.APIURL, "/"))
	}
	api := stripe.GetBackendWithConfig(stripe.APIBackend, bc)
	p := &stripeProvider{cfg: cfg, api: api, payments: payments}
	p.autoTopUps, _ = payments.(storage.AutoTopUps)
	return p, nil
}

// checkout creates the Checkout Session. The account goes into the
// session (client_reference_id and metadata) and into its PaymentIntent's
// metadata, so that the payment's events, its refunds' and its disputes'
// can all be traced to it. With a customer, the payment method is saved
// to it for off-session payments (auto top-up).
func (p *stripeProvider) checkout(ctx context.Context, acct storage.Account, cents int64, successURL, cancelURL, customer string) (Session, error) {
	meta := map[string]string{metaAccount: acct.ID, metaAccountName: acct.Name}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(acct.ID),
		SuccessURL:        stripe.String(successURL),
		CancelURL:         stripe.String(cancelURL),
		Metadata:          meta,
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(p.cfg.Currency),
				UnitAmount:  stripe.Int64(cents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(p.cfg.ProductName)},
			},
		}},
	}
	if customer != "" {
		params.Customer = stripe.String(customer)
		params.PaymentIntentData.SetupFutureUsage = stripe.String(string(stripe.PaymentIntentSetupFutureUsageOffSession))
		params.Metadata = map[string]string{metaAccount: acct.ID, metaAccountName: acct.Name, metaSaveCard: "1"}
	}
	params.Context = ctx
	s := &stripe.CheckoutSession{}
	if err := p.api.Call(http.MethodPost, "/v1/checkout/sessions", p.cfg.SecretKey, params, s); err != nil {
		return Session{}, err
	}
	if s.URL == "" {
		return Session{}, errors.New("stripe answered a Checkout Session without a URL")
	}
	return Session{ID: s.ID, URL: s.URL}, nil
}

// StripeWebhook serves Stripe's webhook: it verifies the Stripe-Signature
// header (stripe-go's webhook package, with the configured tolerance) and
// takes the event. Answers: 200 for every event taken, whatever it did
// (including events it ignores), 400 for a bad or stale signature, 500
// when it could not be recorded, so that Stripe delivers it again.
func (s *Service) StripeWebhook(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.stripe == nil {
		apierror.Write(w, ErrNotConfigured)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest, "method_not_allowed", "Webhooks are POSTed."))
		return
	}
	body, err := readBody(r)
	if err != nil {
		apierror.Write(w, err)
		return
	}
	ev, err := webhook.ConstructEventWithOptions(body, r.Header.Get("Stripe-Signature"), s.stripe.cfg.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: s.stripe.cfg.Tolerance, IgnoreAPIVersionMismatch: true})
	switch {
	case errors.Is(err, webhook.ErrTooOld):
		apierror.Write(w, apierror.InvalidRequest("signature_too_old",
			"The Stripe-Signature timestamp is older than the tolerance; a replayed delivery is refused."))
		return
	case err != nil:
		s.cfg.Logger.Info("Stripe webhook refused", zap.Error(err))
		apierror.Write(w, apierror.InvalidRequest("invalid_signature",
			"The Stripe-Signature header does not verify with the webhook secret."))
		return
	}
	pe, end, err := s.stripe.event(r.Context(), ev)
	if err != nil {
		s.cfg.Logger.Error("Stripe event not taken", zap.String("event", ev.ID), zap.String("type", string(ev.Type)), zap.Error(err))
		apierror.Write(w, err)
		return
	}
	var after func(context.Context) error
	if end != nil {
		// Also for a duplicate: a delivery that posted its credit and
		// failed before ending the attempt is delivered again.
		after = func(ctx context.Context) error { return s.finishAutoTopUp(ctx, *end) }
	}
	s.recordThen(w, r, pe, after)
}

// event turns a verified Stripe event into what the store records.
// Events of other types, and of payments the gateway did not start, are
// recorded as ignored.
func (p *stripeProvider) event(ctx context.Context, ev stripe.Event) (storage.PaymentEvent, *autoTopUpEnd, error) {
	pe := storage.PaymentEvent{Provider: ProviderStripe, EventID: ev.ID, Type: string(ev.Type), Outcome: "ignored"}
	if ev.Data == nil {
		return pe, nil, nil
	}
	raw := ev.Data.Raw
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		var cs stripe.CheckoutSession
		if err := json.Unmarshal(raw, &cs); err != nil {
			return pe, nil, badEvent(err)
		}
		pe = p.paid(pe, &cs)
		if len(pe.Entries) > 0 {
			if err := p.savePaymentMethod(ctx, &cs); err != nil {
				return pe, nil, err
			}
		}
		return pe, nil, nil
	case "payment_intent.succeeded", "payment_intent.payment_failed":
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(raw, &pi); err != nil {
			return pe, nil, badEvent(err)
		}
		pe, end := p.autoTopUpEvent(pe, &pi)
		return pe, end, nil
	case "refund.created", "refund.updated", "refund.failed", "charge.refund.updated":
		var re stripe.Refund
		if err := json.Unmarshal(raw, &re); err != nil {
			return pe, nil, badEvent(err)
		}
		out, err := p.refunds(ctx, pe, paymentIntentID(re.PaymentIntent), []*stripe.Refund{&re})
		return out, nil, err
	case "charge.refunded":
		var ch stripe.Charge
		if err := json.Unmarshal(raw, &ch); err != nil {
			return pe, nil, badEvent(err)
		}
		refunds, err := p.chargeRefunds(ctx, &ch)
		if err != nil {
			return pe, nil, err
		}
		out, err := p.refunds(ctx, pe, paymentIntentID(ch.PaymentIntent), refunds)
		return out, nil, err
	case "charge.dispute.closed":
		var d stripe.Dispute
		if err := json.Unmarshal(raw, &d); err != nil {
			return pe, nil, badEvent(err)
		}
		if d.Status != stripe.DisputeStatusLost {
			return pe, nil, nil
		}
		acct, err := p.account(ctx, paymentIntentID(d.PaymentIntent))
		if err != nil || acct == "" {
			return pe, nil, err
		}
		pe.AccountID = acct
		pe.Entries = []storage.Entry{{AccountID: acct, AmountCents: -d.Amount, Kind: storage.EntryAdjustment,
			Reference: ref(ProviderStripe, d.ID), Note: "Stripe dispute " + d.ID + " lost"}}
	}
	return pe, nil, nil
}

func badEvent(err error) error {
	return apierror.InvalidRequest("invalid_event", "The event's object could not be read: "+err.Error())
}

func paymentIntentID(pi *stripe.PaymentIntent) string {
	if pi == nil {
		return ""
	}
	return pi.ID
}

// paid credits a paid Checkout Session the gateway created. The
// reference is the session's id: its completion and its asynchronous
// success name the same session and credit it once.
func (p *stripeProvider) paid(pe storage.PaymentEvent, cs *stripe.CheckoutSession) storage.PaymentEvent {
	acct := cs.Metadata[metaAccount]
	switch {
	case acct == "" || cs.Mode != stripe.CheckoutSessionModePayment:
		return pe // not one of ours
	case cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid:
		// Paid later (a bank debit): its async_payment_succeeded
		// event credits it.
		pe.AccountID, pe.Outcome = acct, "awaiting_payment"
		return pe
	case string(cs.Currency) != p.cfg.Currency || cs.AmountTotal <= 0:
		pe.AccountID, pe.Outcome = acct, "wrong_currency"
		return pe
	}
	pe.AccountID = acct
	if pi := paymentIntentID(cs.PaymentIntent); pi != "" {
		pe.Payment = &storage.Payment{PaymentID: pi, AccountID: acct, AmountCents: cs.AmountTotal}
	}
	pe.Entries = []storage.Entry{{AccountID: acct, AmountCents: cs.AmountTotal, Kind: storage.EntryTopUp,
		Reference: ref(ProviderStripe, cs.ID), Note: "Stripe Checkout " + cs.ID}}
	return pe
}

// refunds debits each refund of a payment the gateway credited, with
// the refund's id as reference, whichever event told of it. A refund
// that failed or was cancelled is debited and credited back, so that the
// order its events arrive in does not matter.
func (p *stripeProvider) refunds(ctx context.Context, pe storage.PaymentEvent, paymentIntent string, refunds []*stripe.Refund) (storage.PaymentEvent, error) {
	acct, err := p.account(ctx, paymentIntent)
	if err != nil || acct == "" {
		return pe, err
	}
	pe.AccountID = acct
	for _, re := range refunds {
		if re == nil || re.Amount <= 0 || (re.Currency != "" && string(re.Currency) != p.cfg.Currency) {
			continue
		}
		pe.Entries = append(pe.Entries, storage.Entry{AccountID: acct, AmountCents: -re.Amount, Kind: storage.EntryRefund,
			Reference: ref(ProviderStripe, re.ID), Note: "Stripe refund " + re.ID})
		if re.Status == stripe.RefundStatusFailed || re.Status == stripe.RefundStatusCanceled {
			pe.Entries = append(pe.Entries, storage.Entry{AccountID: acct, AmountCents: re.Amount, Kind: storage.EntryAdjustment,
				Reference: ref(ProviderStripe, re.ID+":reversed"), Note: "Stripe refund " + re.ID + " " + string(re.Status)})
		}
	}
	if len(pe.Entries) == 0 {
		pe.Outcome = "ignored"
	}
	return pe, nil
}

// chargeRefunds returns a refunded charge's refunds: those the event
// holds, or, since API versions from 2022-11-15 on leave them out, the
// list Stripe gives for the charge.
func (p *stripeProvider) chargeRefunds(ctx context.Context, ch *stripe.Charge) ([]*stripe.Refund, error) {
	if ch.Refunds != nil && len(ch.Refunds.Data) > 0 && !ch.Refunds.HasMore {
		return ch.Refunds.Data, nil
	}
	var out []*stripe.Refund
	// List parameters go through CallRaw: Call expects the fields of
	// other parameters (Metadata) and fails on a list's.
	params := &stripe.RefundListParams{Charge: stripe.String(ch.ID)}
	params.Limit = stripe.Int64(100)
	for {
		query := &form.Values{}
		form.AppendTo(query, params)
		page := &stripe.RefundList{}
		if err := p.api.CallRaw(http.MethodGet, "/v1/refunds", p.cfg.SecretKey, []byte(query.Encode()), &stripe.Params{Context: ctx}, page); err != nil {
			return nil, providerUnavailable(err)
		}
		out = append(out, page.Data...)
		if !page.HasMore || len(page.Data) == 0 || len(out) > 1000 {
			return out, nil
		}
		params.StartingAfter = stripe.String(page.Data[len(page.Data)-1].ID)
	}
}

// account is the account a PaymentIntent's money went to: from the
// payments the gateway recorded, else from the metadata it put on the
// PaymentIntent (a refund whose payment's completion has not been
// delivered yet). "" for a payment the gateway did not start.
func (p *stripeProvider) account(ctx context.Context, paymentIntent string) (string, error) {
	if paymentIntent == "" {
		return "", nil
	}
	if pay, err := p.payments.PaymentByID(ctx, ProviderStripe, paymentIntent); err == nil {
		return pay.AccountID, nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	params := &stripe.PaymentIntentRetrieveParams{}
	params.Context = ctx
	pi := &stripe.PaymentIntent{}
	if err := p.api.Call(http.MethodGet, stripe.FormatURLPath("/v1/payment_intents/%s", paymentIntent), p.cfg.SecretKey, params, pi); err != nil {
		return "", providerUnavailable(err)
	}
	return pi.Metadata[metaAccount], nil
}

// providerUnavailable answers an event that needs Stripe's API while it
// cannot be reached: 503, so that Stripe delivers the event again.
func providerUnavailable(err error) error {
	return apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "payment_provider_error",
		"Stripe's API could not be asked about this event ("+err.Error()+"); deliver it again later.")
}
