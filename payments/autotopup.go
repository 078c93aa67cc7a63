package payments

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v82"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// Auto top-up timing.
const (
	// autoTopUpStale is how long an attempt may stay in flight without a
	// PaymentIntent before it is sent again (same idempotency key, so
	// Stripe answers with the PaymentIntent it made, if it made one):
	// the node that claimed it died or could not reach Stripe.
	autoTopUpStale = 10 * time.Minute
	// autoTopUpRetryAfter is how long a failed attempt makes the next
	// one wait: a declined card is not tried again with every charge.
	autoTopUpRetryAfter = time.Hour
	// autoTopUpSweep is how often a worker looks for accounts below
	// their threshold that no charge told it of (charged on a node that
	// runs no worker, or an attempt gone stale).
	autoTopUpSweep = time.Minute
)

// autoTopUpCustomer is the Stripe Customer a Checkout for acct saves its
// payment method to: "" while the account's auto top-up is off. The
// customer is created once per account (with an idempotency key of the
// account, so two Checkouts at once make one) and stored.
func (s *Service) autoTopUpCustomer(ctx context.Context, acct storage.Account) (string, error) {
	at := s.stripe.autoTopUps
	if at == nil {
		return "", nil
	}
	set, err := at.AutoTopUp(ctx, acct.ID)
	if err != nil {
		return "", err
	}
	if !set.Enabled {
		return "", nil
	}
	if set.CustomerID != "" {
		return set.CustomerID, nil
	}
	params := &stripe.CustomerCreateParams{Metadata: map[string]string{metaAccount: acct.ID, metaAccountName: acct.Name}}
	params.Context = ctx
	params.SetIdempotencyKey("customer:" + acct.ID)
	c := &stripe.Customer{}
	if err := s.stripe.api.Call(http.MethodPost, "/v1/customers", s.stripe.cfg.SecretKey, params, c); err != nil {
		s.cfg.Logger.Error("creating a Stripe Customer failed", zap.String("account", acct.Name), zap.Error(err))
		return "", apierror.New(http.StatusBadGateway, apierror.TypeServer, "payment_provider_error",
			"The payment provider could not be reached or refused the payment page; nothing was charged. Try again later.")
	}
	if c.ID == "" {
		return "", errors.New("stripe answered a Customer without an id")
	}
	if err := at.SetAutoTopUpCustomer(ctx, acct.ID, c.ID); err != nil {
		return "", err
	}
	return c.ID, nil
}

// savePaymentMethod stores the payment method a paid Checkout Session
// saved for auto top-ups: the session's PaymentIntent's, asked of Stripe
// when the event does not carry it expanded.
func (p *stripeProvider) savePaymentMethod(ctx context.Context, cs *stripe.CheckoutSession) error {
	acct := cs.Metadata[metaAccount]
	if p.autoTopUps == nil || cs.Metadata[metaSaveCard] != "1" || cs.Customer == nil || cs.Customer.ID == "" ||
		cs.PaymentIntent == nil || cs.PaymentIntent.ID == "" {
		return nil
	}
	pm := cs.PaymentIntent.PaymentMethod
	if pm == nil || pm.ID == "" {
		params := &stripe.PaymentIntentRetrieveParams{}
		params.Context = ctx
		pi := &stripe.PaymentIntent{}
		if err := p.api.Call(http.MethodGet, stripe.FormatURLPath("/v1/payment_intents/%s", cs.PaymentIntent.ID), p.cfg.SecretKey, params, pi); err != nil {
			return providerUnavailable(err)
		}
		pm = pi.PaymentMethod
	}
	if pm == nil || pm.ID == "" {
		return nil
	}
	err := p.autoTopUps.SaveAutoTopUpPaymentMethod(ctx, acct, cs.Customer.ID, pm.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // the account is gone; its payment is still recorded
	}
	return err
}

// autoTopUpEnd is how a PaymentIntent's event ends an attempt.
type autoTopUpEnd struct {
	account, key string
	ok           bool
	reason       string
}

// autoTopUpEvent turns an automatic top-up's PaymentIntent event into
// its credit (succeeded; the reference is the PaymentIntent, so a
// redelivery or a second event about it credits once) or a recorded
// failure. PaymentIntents without the attempt's key are not ours to
// credit here: a Checkout's is credited by its session's event.
func (p *stripeProvider) autoTopUpEvent(pe storage.PaymentEvent, pi *stripe.PaymentIntent) (storage.PaymentEvent, *autoTopUpEnd) {
	acct, key := pi.Metadata[metaAccount], pi.Metadata[metaAutoTopUp]
	if acct == "" || key == "" {
		return pe, nil
	}
	pe.AccountID = acct
	end := &autoTopUpEnd{account: acct, key: key}
	if pe.Type == "payment_intent.payment_failed" {
		end.reason = "the payment failed"
		if e := pi.LastPaymentError; e != nil {
			end.reason = failureReason(string(e.Code), string(e.DeclineCode), e.Msg)
		}
		pe.Outcome = "auto_topup_failed"
		return pe, end
	}
	amount := pi.AmountReceived
	if amount <= 0 {
		amount = pi.Amount
	}
	if string(pi.Currency) != p.cfg.Currency || amount <= 0 {
		// Not what the gateway asked for: the attempt failed, and
		// nothing is credited.
		end.reason = "the payment was not in " + p.cfg.Currency
		pe.Outcome = "wrong_currency"
		return pe, end
	}
	end.ok = true
	pe.Payment = &storage.Payment{PaymentID: pi.ID, AccountID: acct, AmountCents: amount}
	pe.Entries = []storage.Entry{{AccountID: acct, AmountCents: amount, Kind: storage.EntryTopUp,
		Reference: ref(ProviderStripe, pi.ID), Note: "Stripe auto top-up " + pi.ID}}
	return pe, end
}

// failureReason is what an alert and the settings say about a failed
// payment.
func failureReason(code, decline, msg string) string {
	switch {
	case code == "" && msg == "":
		return "the payment failed"
	case decline != "" && decline != code:
		code += " (" + decline + ")"
	}
	if msg == "" {
		return code
	}
	if code == "" {
		return msg
	}
	return code + ": " + msg
}

// finishAutoTopUp ends the attempt an event was about.
func (s *Service) finishAutoTopUp(ctx context.Context, end autoTopUpEnd) error {
	at := s.stripe.autoTopUps
	if at == nil {
		return nil
	}
	res, err := at.FinishAutoTopUp(ctx, end.account, end.key, end.ok, end.reason, s.cfg.Now(), autoTopUpRetryAfter)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err == nil && res.Finished && !end.ok {
		s.cfg.Logger.Warn("auto top-up failed", zap.String("account_id", end.account), zap.String("attempt", end.key),
			zap.String("reason", end.reason), zap.Int64("failures", res.Failures), zap.Bool("turned_off", res.Disabled))
	}
	return err
}

// AutoTopUpWorker starts accounts' automatic top-ups: when told of a
// charge that committed (Notify, from the ledger writer's after-commit
// hook) and, every minute, for every account found below its threshold.
// It never runs on a client's request: a charge only wakes it. Each
// attempt is claimed in the store first (one in flight per account,
// whatever the number of nodes and workers), then sent to Stripe as an
// off-session PaymentIntent with the attempt's idempotency key. The
// balance is credited by the PaymentIntent's succeeded event only.
type AutoTopUpWorker struct {
	s     *Service
	store storage.AutoTopUps
	mu    sync.Mutex
	due   map[string]struct{}
	wake  chan struct{}
}

// AutoTopUps returns the service's worker, or nil when auto top-up
// cannot work here (no Stripe, or a store without auto top-ups).
func (s *Service) AutoTopUps() *AutoTopUpWorker {
	if s == nil || s.stripe == nil || s.stripe.autoTopUps == nil {
		return nil
	}
	s.workerOnce.Do(func() {
		s.worker = &AutoTopUpWorker{s: s, store: s.stripe.autoTopUps, due: make(map[string]struct{}), wake: make(chan struct{}, 1)}
	})
	return s.worker
}

// Notify tells the worker that charges of these accounts committed. It
// never waits: it only marks them for the worker's goroutine.
func (w *AutoTopUpWorker) Notify(accountIDs ...string) {
	if w == nil || len(accountIDs) == 0 {
		return
	}
	w.mu.Lock()
	for _, id := range accountIDs {
		if len(w.due) < 100_000 {
			w.due[id] = struct{}{}
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// StartAutoTopUp runs the service's auto top-up worker until the returned
// stop is called, woken by every batch of charges that onCommit reports
// (a ledger writer's OnCommit, which returns its own removal; nil for a
// worker that only sweeps). It returns nil when the service cannot charge
// saved cards (no Stripe). Accounts have auto top-up off until their
// owner turns it on.
func (s *Service) StartAutoTopUp(onCommit func(func(accountIDs []string)) (remove func())) (stop func()) {
	w := s.AutoTopUps()
	if w == nil {
		return nil
	}
	remove := func() {}
	if onCommit != nil {
		remove = onCommit(func(accounts []string) { w.Notify(accounts...) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	return func() {
		remove()
		cancel()
		<-done
	}
}

// Run checks the accounts Notify named, and sweeps every minute, until
// ctx is done. A panic is recovered and the loop started again.
func (w *AutoTopUpWorker) Run(ctx context.Context) {
	guard.Loop(ctx, "auto top-up worker", autoTopUpSweep, func(ctx context.Context) {
		t := time.NewTicker(autoTopUpSweep)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
				w.mu.Lock()
				due := w.due
				w.due = make(map[string]struct{})
				w.mu.Unlock()
				for id := range due {
					w.Check(ctx, id)
				}
			case <-t.C:
				w.Sweep(ctx)
			}
		}
	})
}

// Sweep checks every account the store finds due.
func (w *AutoTopUpWorker) Sweep(ctx context.Context) {
	ids, err := w.store.DueAutoTopUps(ctx, w.s.cfg.Now(), autoTopUpStale, 1000)
	if err != nil {
		w.s.cfg.Logger.Error("listing due auto top-ups failed", zap.Error(err))
		return
	}
	for _, id := range ids {
		w.Check(ctx, id)
	}
}

// Check starts an attempt for the account if one is due, and reports
// whether it asked Stripe for a payment.
func (w *AutoTopUpWorker) Check(ctx context.Context, accountID string) bool {
	log := w.s.cfg.Logger
	at, err := w.store.ClaimAutoTopUp(ctx, accountID, w.s.cfg.Now(), autoTopUpStale)
	if errors.Is(err, storage.ErrNotFound) {
		return false
	}
	if err != nil {
		log.Error("claiming an auto top-up failed", zap.String("account_id", accountID), zap.Error(err))
		return false
	}
	pi, err := w.s.stripe.chargeSaved(ctx, at)
	var se *stripe.Error
	switch {
	case errors.As(err, &se) && se.HTTPStatusCode >= 400 && se.HTTPStatusCode < 500 && se.HTTPStatusCode != http.StatusTooManyRequests:
		// Refused (declined, authentication required, a payment method
		// gone): the attempt failed. Its payment_failed event, if
		// Stripe sends one, finds it ended.
		reason := failureReason(string(se.Code), string(se.DeclineCode), se.Msg)
		if ferr := w.s.finishAutoTopUp(context.WithoutCancel(ctx), autoTopUpEnd{account: accountID, key: at.Key, reason: reason}); ferr != nil {
			log.Error("recording a failed auto top-up failed", zap.String("account_id", accountID), zap.Error(ferr))
		}
		return true
	case err != nil:
		// Stripe unreachable: the attempt stays in flight and is sent
		// again, with the same key, once stale.
		log.Warn("auto top-up: Stripe could not be asked; retried later", zap.String("account_id", accountID), zap.Error(err))
		return true
	}
	if err := w.store.SetAutoTopUpIntent(context.WithoutCancel(ctx), accountID, at.Key, pi.ID); err != nil {
		log.Error("recording an auto top-up's PaymentIntent failed", zap.String("account_id", accountID), zap.Error(err))
	}
	log.Info("auto top-up requested", zap.String("account_id", accountID), zap.String("attempt", at.Key),
		zap.String("payment_intent", pi.ID), zap.String("status", string(pi.Status)), zap.Int64("amount_cents", at.AmountCents))
	return true
}

// chargeSaved creates and confirms the off-session PaymentIntent of an
// attempt.
func (p *stripeProvider) chargeSaved(ctx context.Context, at storage.AutoTopUpAttempt) (*stripe.PaymentIntent, error) {
	params := &stripe.PaymentIntentCreateParams{
		Amount:        stripe.Int64(at.AmountCents),
		Currency:      stripe.String(p.cfg.Currency),
		Customer:      stripe.String(at.CustomerID),
		PaymentMethod: stripe.String(at.PaymentMethodID),
		Confirm:       stripe.Bool(true),
		OffSession:    stripe.Bool(true),
		Description:   stripe.String(p.cfg.ProductName + " (automatic top-up)"),
		Metadata:      map[string]string{metaAccount: at.AccountID, metaAutoTopUp: at.Key},
	}
	params.Context = ctx
	params.SetIdempotencyKey(at.Key)
	pi := &stripe.PaymentIntent{}
	if err := p.api.Call(http.MethodPost, "/v1/payment_intents", p.cfg.SecretKey, params, pi); err != nil {
		return nil, err
	}
	if pi.ID == "" {
		return nil, fmt.Errorf("stripe answered a PaymentIntent without an id")
	}
	return pi, nil
}
