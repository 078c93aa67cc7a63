package payments

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// Environment variables of the payment providers, read when the config
// leaves a field empty (docs/payments.md). Part of the operator contract.
const (
	EnvStripeSecretKey     = "SWITCHYARD_STRIPE_SECRET_KEY"
	EnvStripeWebhookSecret = "SWITCHYARD_STRIPE_WEBHOOK_SECRET"
	EnvStripeAPIURL        = "SWITCHYARD_STRIPE_API_URL"
	EnvGenericSecret       = "SWITCHYARD_PAYMENTS_WEBHOOK_SECRET"
)

// Settings configure the payment providers through which account
// owners add funds (docs/payments.md). Without any, only operators credit
// balances.
type Settings struct {
	// Stripe Checkout. On when a secret key and a webhook secret are
	// set, here or in the environment. Default: from the environment.
	Stripe *StripeSettings `json:"stripe,omitempty"`
	// The generic provider's webhook. On when its secret is set.
	// Default: from the environment.
	Generic *GenericSettings `json:"generic,omitempty"`
}

// StripeSettings configure Stripe Checkout.
type StripeSettings struct {
	// Secret API key (sk_live_..., sk_test_..., or a restricted key that
	// may write Checkout Sessions and read PaymentIntents and refunds).
	// Default: $SWITCHYARD_STRIPE_SECRET_KEY.
	SecretKey string `json:"secret_key,omitempty"`
	// Signing secret of the webhook endpoint (whsec_...). Default:
	// $SWITCHYARD_STRIPE_WEBHOOK_SECRET.
	WebhookSecret string `json:"webhook_secret,omitempty"`
	// Base URL of Stripe's API. Default: $SWITCHYARD_STRIPE_API_URL,
	// else Stripe's own; tests point it at stripe-mock.
	APIURL string `json:"api_url,omitempty"`
	// Name of the line item on the Checkout page. Default: "Account
	// balance".
	ProductName string `json:"product_name,omitempty"`
	// How old a webhook's signature may be. Default: 5m.
	Tolerance duration.Duration `json:"tolerance,omitempty"`
}

// GenericSettings configure the generic provider's webhook.
type GenericSettings struct {
	// Shared secret that signs the webhook's bodies, at least 32
	// characters. Default: $SWITCHYARD_PAYMENTS_WEBHOOK_SECRET.
	Secret string `json:"secret,omitempty"`
	// How far a signature's timestamp may be from this node's clock.
	// Default: 5m.
	Tolerance duration.Duration `json:"tolerance,omitempty"`
}

// Providers sets the providers c and the environment turn on in cfg,
// and reports whether any is. lookup returns a configured value, its
// placeholders replaced, or when it is empty the environment variable
// env.
func (c *Settings) Providers(cfg *Config, lookup func(configured, env string) string) (bool, error) {
	var sc StripeSettings
	var gc GenericSettings
	if c != nil && c.Stripe != nil {
		sc = *c.Stripe
	}
	if c != nil && c.Generic != nil {
		gc = *c.Generic
	}
	key, hook := lookup(sc.SecretKey, EnvStripeSecretKey), lookup(sc.WebhookSecret, EnvStripeWebhookSecret)
	switch {
	case key != "" && hook != "":
		cfg.Stripe = &StripeConfig{SecretKey: key, WebhookSecret: hook,
			APIURL: lookup(sc.APIURL, EnvStripeAPIURL), ProductName: sc.ProductName, Tolerance: time.Duration(sc.Tolerance)}
	case key != "" || hook != "":
		return false, fmt.Errorf("payments: Stripe needs both %s and %s (or secret_key and webhook_secret)",
			EnvStripeSecretKey, EnvStripeWebhookSecret)
	}
	if secret := lookup(gc.Secret, EnvGenericSecret); secret != "" {
		if len(secret) < 32 {
			return false, fmt.Errorf("payments: %s (or generic's secret) must be at least 32 characters", EnvGenericSecret)
		}
		cfg.Generic = &GenericConfig{Secret: []byte(secret), Tolerance: time.Duration(gc.Tolerance)}
	}
	return cfg.Stripe != nil || cfg.Generic != nil, nil
}

// Service builds the providers c and the environment turn on, over cfg;
// nil when none is. Refunds and lost disputes are also taken off the
// limiter's mirrored balance when debiter is not nil (a Redis limiter).
func (c *Settings) Service(cfg Config, debiter limits.Debiter, lookup func(configured, env string) string) (*Service, error) {
	if debiter != nil {
		logger := cfg.Logger
		if logger == nil {
			logger = zap.NewNop()
		}
		// A debit the mirror misses could be spent again until it expires.
		cfg.OnDebit = func(ctx context.Context, account string, cents int64) {
			if err := debiter.Debit(ctx, account, cents); err != nil {
				logger.Warn("the limiter did not take in a debit; it will when the mirrored balance expires",
					zap.String("account_id", account), zap.Int64("cents", cents), zap.Error(err))
			}
		}
	}
	if on, err := c.Providers(&cfg, lookup); !on || err != nil {
		return nil, err
	}
	return New(cfg)
}
