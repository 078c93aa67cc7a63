// Package payments takes account owners' money through a payment
// provider and turns what the provider confirms into ledger entries:
// Stripe Checkout (a Checkout Session per "Add funds", its webhook for
// payments, refunds and lost disputes) and a generic provider (an
// HMAC-signed "payment succeeded" webhook for platforms that bill
// elsewhere). docs/payments.md is the operator's guide.
//
// Every event is taken at most once (storage.Payments keys it by
// provider and event id), and every ledger entry it causes has a
// reference derived from the provider's object (the Checkout Session,
// the refund, the dispute), so that redeliveries, several events about
// one object and events out of order credit or debit once. Without a
// provider configured, only operators credit balances (billing.TopUp).
package payments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// Config is what a Service works with.
type Config struct {
	// Store records events and posts their entries. Required.
	Store storage.Store
	// Profile bounds what one payment may add ($5 to $1000).
	Profile policy.Profile
	// Stripe configures Stripe Checkout. Nil: no Stripe.
	Stripe *StripeConfig
	// Generic configures the generic provider's webhook. Nil: none.
	Generic *GenericConfig
	// Logger receives what the providers' callers are not told. Default:
	// no logging.
	Logger *zap.Logger
	// Now is the clock the generic provider's signatures are checked
	// against, and auto top-up's (when an attempt is stale, how long a
	// failure makes the next wait). Default: time.Now.
	Now func() time.Time
	// OnDebit is told of every entry an event posted that lowered a
	// balance (a refund, a lost dispute), after it was committed, so
	// that the limiter's mirror of the balance takes it in at once
	// (limits.Debiter). Default: nil, nobody is told.
	OnDebit func(ctx context.Context, account string, cents int64)
}

// StripeConfig configures Stripe Checkout.
type StripeConfig struct {
	// SecretKey calls Stripe's API (sk_live_..., sk_test_..., or a
	// restricted key that may write Checkout Sessions and read
	// PaymentIntents and refunds). Required.
	SecretKey string
	// WebhookSecret verifies the webhook's Stripe-Signature header
	// (whsec_...). Required.
	WebhookSecret string
	// APIURL is Stripe's API base URL. Default: Stripe's; tests point it
	// at stripe-mock.
	APIURL string
	// Currency of the balance, lowercase ISO 4217. Default: "usd".
	Currency string
	// ProductName is the line item the customer sees on the Checkout
	// page. Default: "Account balance".
	ProductName string
	// Tolerance is how old a webhook's signature may be. Default: 5m.
	Tolerance time.Duration
	// HTTPClient calls the API. Default: a client with a 30 s timeout.
	HTTPClient *http.Client
}

// GenericConfig configures the generic provider.
type GenericConfig struct {
	// Secret verifies the Switchyard-Signature header, at least 32
	// bytes. Required.
	Secret []byte
	// Tolerance is how far a signature's timestamp may be from this
	// node's clock. Default: 5m.
	Tolerance time.Duration
}

// Service is the payment providers of one gateway. It is safe for
// concurrent use.
type Service struct {
	cfg    Config
	stripe *stripeProvider // nil: no Stripe

	workerOnce sync.Once
	worker     *AutoTopUpWorker
}

// New checks cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("payments: Store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{cfg: cfg}
	if cfg.Stripe != nil {
		p, err := newStripe(*cfg.Stripe, cfg.Store)
		if err != nil {
			return nil, err
		}
		s.stripe = p
	}
	if g := cfg.Generic; g != nil {
		if len(g.Secret) < 32 {
			return nil, errors.New("payments: the generic provider's secret must be at least 32 bytes")
		}
		if g.Tolerance <= 0 {
			g.Tolerance = 5 * time.Minute
		}
	}
	return s, nil
}

// CheckoutEnabled reports whether account owners can add funds here: a
// provider with a payment page (Stripe) is configured.
func (s *Service) CheckoutEnabled() bool { return s != nil && s.stripe != nil }

// Session is a payment page to send the customer to.
type Session struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Checkout creates a Checkout Session for cents (within the profile's
// top-up bounds, else 400 invalid_amount) to be credited to acct once
// Stripe confirms the payment. A disabled account is refused (409
// account_disabled). successURL and cancelURL are where Stripe sends the
// customer back; Stripe replaces {CHECKOUT_SESSION_ID} in them.
func (s *Service) Checkout(ctx context.Context, acct storage.Account, cents int64, successURL, cancelURL string) (Session, error) {
	if !s.CheckoutEnabled() {
		return Session{}, ErrNotConfigured
	}
	if cents < s.cfg.Profile.MinTopUpCents || cents > s.cfg.Profile.MaxTopUpCents {
		return Session{}, apierror.InvalidRequest("invalid_amount",
			fmt.Sprintf("Funds are added in amounts from %s to %s.", usd(s.cfg.Profile.MinTopUpCents), usd(s.cfg.Profile.MaxTopUpCents)))
	}
	if acct.Disabled() {
		return Session{}, policy.ErrAccountDisabled(acct.Name)
	}
	customer, err := s.autoTopUpCustomer(ctx, acct)
	if err != nil {
		return Session{}, err
	}
	sess, err := s.stripe.checkout(ctx, acct, cents, successURL, cancelURL, customer)
	if err != nil {
		s.cfg.Logger.Error("creating a Stripe Checkout Session failed", zap.String("account", acct.Name), zap.Error(err))
		return Session{}, apierror.New(http.StatusBadGateway, apierror.TypeServer, "payment_provider_error",
			"The payment provider could not be reached or refused the payment page; nothing was charged. Try again later.")
	}
	return sess, nil
}

// ErrNotConfigured answers a payment request on a gateway without a
// provider.
var ErrNotConfigured = apierror.New(http.StatusNotImplemented, apierror.TypeInvalidRequest, "payments_not_configured",
	"This gateway takes no payments: an operator adds funds.")

// usd formats cents as dollars for messages.
func usd(c int64) string { return fmt.Sprintf("$%d.%02d", c/100, c%100) }

// maxWebhookBody bounds a webhook's body. Stripe's events are a few
// kilobytes; a Checkout Session with many fields stays far below.
const maxWebhookBody = 256 << 10

// readBody reads a webhook's body up to maxWebhookBody.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil {
		return nil, apierror.InvalidRequest("invalid_body", "The body could not be read.")
	}
	if len(body) > maxWebhookBody {
		return nil, apierror.New(http.StatusRequestEntityTooLarge, apierror.TypeInvalidRequest, "request_too_large",
			"A webhook body is at most 256 KiB.")
	}
	return body, nil
}

// answer writes the outcome of an event taken (200) in JSON.
func answer(w http.ResponseWriter, res storage.PaymentResult) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	outcome := res.Outcome
	if res.Duplicate {
		outcome = "duplicate"
	}
	fmt.Fprintf(w, `{"received":true,"outcome":%q}`+"\n", outcome)
}

// ref is the ledger reference of a provider's object.
func ref(provider, object string) string {
	return storage.PaymentReferencePrefix + provider + ":" + object
}

// record takes ev and answers the provider; a store failure is 500, so
// that the provider delivers the event again.
func (s *Service) record(w http.ResponseWriter, r *http.Request, ev storage.PaymentEvent) {
	s.recordThen(w, r, ev, nil)
}

// recordThen is record with after, when not nil, run once the event is
// recorded (or found recorded before) and before the provider is
// answered: its failure is a 500 too.
func (s *Service) recordThen(w http.ResponseWriter, r *http.Request, ev storage.PaymentEvent, after func(context.Context) error) {
	res, err := s.cfg.Store.RecordPaymentEvent(context.WithoutCancel(r.Context()), ev)
	if errors.Is(err, storage.ErrNotFound) {
		// The account named by the payment never existed: nothing we
		// made. Recorded, so the provider stops delivering it.
		s.cfg.Logger.Error("a payment names an account that does not exist", zap.String("provider", ev.Provider),
			zap.String("event", ev.EventID), zap.String("account_id", ev.AccountID))
		ev.AccountID, ev.Entries, ev.Payment, ev.Outcome = "", nil, nil, "unknown_account"
		res, err = s.cfg.Store.RecordPaymentEvent(context.WithoutCancel(r.Context()), ev)
	}
	if err != nil {
		s.cfg.Logger.Error("recording a payment event failed", zap.String("provider", ev.Provider),
			zap.String("event", ev.EventID), zap.Error(err))
		apierror.Write(w, apierror.Internal())
		return
	}
	if after != nil {
		if err := after(context.WithoutCancel(r.Context())); err != nil {
			s.cfg.Logger.Error("recording a payment event's consequences failed", zap.String("provider", ev.Provider),
				zap.String("event", ev.EventID), zap.Error(err))
			apierror.Write(w, apierror.Internal())
			return
		}
	}
	for _, e := range res.Posted {
		if e.AmountCents < 0 && s.cfg.OnDebit != nil {
			s.cfg.OnDebit(context.WithoutCancel(r.Context()), e.AccountID, -e.AmountCents)
		}
	}
	if len(res.Posted) > 0 {
		s.cfg.Logger.Info("payment event posted", zap.String("provider", ev.Provider), zap.String("event", ev.EventID),
			zap.String("type", ev.Type), zap.String("account_id", ev.AccountID), zap.String("outcome", res.Outcome))
	}
	answer(w, res)
}
