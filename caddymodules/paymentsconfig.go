package caddymodules

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// Environment variables of the payment providers and of alerts, read
// when the config leaves a field empty (docs/payments.md,
// docs/accounts.md).
const (
	envStripeSecretKey     = "SWITCHYARD_STRIPE_SECRET_KEY"
	envStripeWebhookSecret = "SWITCHYARD_STRIPE_WEBHOOK_SECRET"
	envStripeAPIURL        = "SWITCHYARD_STRIPE_API_URL"
	envGenericSecret       = "SWITCHYARD_PAYMENTS_WEBHOOK_SECRET"
	envSMTPAddr            = "SWITCHYARD_SMTP_ADDR"
	envSMTPFrom            = "SWITCHYARD_SMTP_FROM"
	envSMTPUsername        = "SWITCHYARD_SMTP_USERNAME"
	envSMTPPassword        = "SWITCHYARD_SMTP_PASSWORD"
	envAlertAllow          = "SWITCHYARD_ALERT_WEBHOOK_ALLOW"
)

// PaymentsConfig configures the payment providers through which account
// owners add funds (docs/payments.md). Without any, only operators credit
// balances.
type PaymentsConfig struct {
	// Stripe Checkout. On when a secret key and a webhook secret are
	// set, here or in the environment. Default: from the environment.
	Stripe *StripeConfig `json:"stripe,omitempty"`
	// The generic provider's webhook. On when its secret is set.
	// Default: from the environment.
	Generic *GenericPaymentsConfig `json:"generic,omitempty"`
}

// StripeConfig is Stripe Checkout.
type StripeConfig struct {
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
	Tolerance caddy.Duration `json:"tolerance,omitempty"`
}

// GenericPaymentsConfig is the generic provider's webhook.
type GenericPaymentsConfig struct {
	// Shared secret that signs the webhook's bodies, at least 32
	// characters. Default: $SWITCHYARD_PAYMENTS_WEBHOOK_SECRET.
	Secret string `json:"secret,omitempty"`
	// How far a signature's timestamp may be from this node's clock.
	// Default: 5m.
	Tolerance caddy.Duration `json:"tolerance,omitempty"`
}

// AlertsConfig configures how balance alerts are delivered
// (docs/accounts.md). Accounts choose their thresholds and destinations
// in the admin API; every node that serves switchyard_admin sends due
// alerts.
type AlertsConfig struct {
	// SMTP server for email alerts, host:port. Default:
	// $SWITCHYARD_SMTP_ADDR, else none (email destinations are refused).
	SMTPAddr string `json:"smtp_addr,omitempty"`
	// Sender address of email alerts. Default: $SWITCHYARD_SMTP_FROM,
	// else alerts@ and the SMTP server's host.
	SMTPFrom string `json:"smtp_from,omitempty"`
	// PLAIN authentication with the SMTP server, sent only over TLS or
	// to localhost. Default: $SWITCHYARD_SMTP_USERNAME and
	// $SWITCHYARD_SMTP_PASSWORD, else none.
	SMTPUsername string `json:"smtp_username,omitempty"`
	SMTPPassword string `json:"smtp_password,omitempty"`
	// Addresses (CIDRs) alert webhooks may reach although not public:
	// loopback, private and link-local addresses are refused otherwise.
	// Default: $SWITCHYARD_ALERT_WEBHOOK_ALLOW (comma-separated), else
	// none.
	AllowPrivate []string `json:"allow_private,omitempty"`
	// How often due deliveries are looked for. Default: 2s.
	PollInterval caddy.Duration `json:"poll_interval,omitempty"`
	// Attempts before a delivery is marked failed. Default: 8.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Wait after the first failed attempt; it doubles after each later
	// one, up to an hour. Default: 30s.
	Backoff caddy.Duration `json:"backoff,omitempty"`
}

// paymentsService builds the providers the config and environment turn
// on; nil when none is.
func (c *PaymentsConfig) service(store storage.Store, app *App, logger *zap.Logger) (*payments.Service, error) {
	repl := caddy.NewReplacer()
	var sc StripeConfig
	var gc GenericPaymentsConfig
	if c != nil && c.Stripe != nil {
		sc = *c.Stripe
	}
	if c != nil && c.Generic != nil {
		gc = *c.Generic
	}
	cfg := payments.Config{Store: store, Profile: app.Profile(), Logger: logger}
	if d, ok := app.limiter.(limits.Debiter); ok {
		// A debit the mirror misses could be spent again until it expires.
		cfg.OnDebit = func(ctx context.Context, account string, cents int64) {
			if err := d.Debit(ctx, account, cents); err != nil {
				logger.Warn("the limiter did not take in a debit; it will when the mirrored balance expires",
					zap.String("account_id", account), zap.Int64("cents", cents), zap.Error(err))
			}
		}
	}
	key, hook := value(repl, sc.SecretKey, envStripeSecretKey), value(repl, sc.WebhookSecret, envStripeWebhookSecret)
	switch {
	case key != "" && hook != "":
		cfg.Stripe = &payments.StripeConfig{SecretKey: key, WebhookSecret: hook,
			APIURL: value(repl, sc.APIURL, envStripeAPIURL), ProductName: sc.ProductName, Tolerance: time.Duration(sc.Tolerance)}
	case key != "" || hook != "":
		return nil, fmt.Errorf("payments: Stripe needs both %s and %s (or secret_key and webhook_secret)",
			envStripeSecretKey, envStripeWebhookSecret)
	}
	if secret := value(repl, gc.Secret, envGenericSecret); secret != "" {
		if len(secret) < 32 {
			return nil, fmt.Errorf("payments: %s (or generic's secret) must be at least 32 characters", envGenericSecret)
		}
		cfg.Generic = &payments.GenericConfig{Secret: []byte(secret), Tolerance: time.Duration(gc.Tolerance)}
	}
	if cfg.Stripe == nil && cfg.Generic == nil {
		return nil, nil
	}
	return payments.New(cfg)
}

// dispatcher builds the alert dispatcher.
func (c *AlertsConfig) dispatcher(store storage.Store, logger *zap.Logger) (*alerts.Dispatcher, error) {
	var ac AlertsConfig
	if c != nil {
		ac = *c
	}
	repl := caddy.NewReplacer()
	cfg := alerts.Config{Store: store, Logger: logger, PollInterval: time.Duration(ac.PollInterval),
		MaxAttempts: ac.MaxAttempts, Backoff: time.Duration(ac.Backoff)}
	if addr := value(repl, ac.SMTPAddr, envSMTPAddr); addr != "" {
		from := value(repl, ac.SMTPFrom, envSMTPFrom)
		if from == "" {
			host, _, _ := strings.Cut(addr, ":")
			from = "alerts@" + host
		}
		cfg.SMTP = &alerts.SMTPConfig{Addr: addr, From: from,
			Username: value(repl, ac.SMTPUsername, envSMTPUsername), Password: value(repl, ac.SMTPPassword, envSMTPPassword)}
	}
	allow := ac.AllowPrivate
	if len(allow) == 0 {
		if env := value(repl, "", envAlertAllow); env != "" {
			allow = strings.Split(env, ",")
		}
	}
	for _, a := range allow {
		p, err := netip.ParsePrefix(strings.TrimSpace(repl.ReplaceAll(a, "")))
		if err != nil {
			return nil, fmt.Errorf("alerts: allow_private %q: want a CIDR such as 10.0.0.0/8", a)
		}
		cfg.Allow = append(cfg.Allow, p)
	}
	return alerts.New(cfg)
}

// runAutoTopUp runs the auto top-up worker of pay, woken by every batch
// of charges ledger commits, until the returned stop is called; nil when
// pay cannot charge saved cards (no Stripe). Accounts have auto top-up
// off until their owner turns it on.
func runAutoTopUp(pay *payments.Service, ledger *billing.LedgerWriter) (stop func()) {
	w := pay.AutoTopUps()
	if w == nil {
		return nil
	}
	remove := func() {}
	if ledger != nil {
		remove = ledger.OnCommit(func(accounts []string) { w.Notify(accounts...) })
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

// runDispatcher runs d until the returned stop is called.
func runDispatcher(d *alerts.Dispatcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// unmarshalPayments reads
//
//	payments {
//		stripe {
//			secret_key     <key>
//			webhook_secret <whsec>
//			api_url        <url>
//			product_name   <name>
//			tolerance      <duration>
//		}
//		generic {
//			secret    <secret>
//			tolerance <duration>
//		}
//	}
func unmarshalPayments(d *caddyfile.Dispenser) (*PaymentsConfig, error) {
	c := new(PaymentsConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	nesting := d.Nesting()
	err := blockOptions(d, nesting, "payments", map[string]optionReader{
		"stripe": subBlockOption(&c.Stripe, func(d *caddyfile.Dispenser) (*StripeConfig, error) {
			s := new(StripeConfig)
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			return s, blockOptions(d, d.Nesting(), "stripe", map[string]optionReader{
				"secret_key":     stringOption(&s.SecretKey),
				"webhook_secret": stringOption(&s.WebhookSecret),
				"api_url":        stringOption(&s.APIURL),
				"product_name":   stringOption(&s.ProductName),
				"tolerance":      positiveDurationOption(&s.Tolerance),
			})
		}),
		"generic": subBlockOption(&c.Generic, func(d *caddyfile.Dispenser) (*GenericPaymentsConfig, error) {
			g := new(GenericPaymentsConfig)
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			return g, blockOptions(d, d.Nesting(), "generic", map[string]optionReader{
				"secret":    stringOption(&g.Secret),
				"tolerance": positiveDurationOption(&g.Tolerance),
			})
		}),
	})
	return c, err
}

// unmarshalAlerts reads
//
//	alerts {
//		smtp_addr     <host:port>
//		smtp_from     <address>
//		smtp_username <name>
//		smtp_password <password>
//		allow_private <cidr>...
//		poll_interval <duration>
//		max_attempts  <n>
//		backoff       <duration>
//	}
func unmarshalAlerts(d *caddyfile.Dispenser) (*AlertsConfig, error) {
	c := new(AlertsConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, d.Nesting(), "alerts", map[string]optionReader{
		"smtp_addr":     stringOption(&c.SMTPAddr),
		"smtp_from":     stringOption(&c.SMTPFrom),
		"smtp_username": stringOption(&c.SMTPUsername),
		"smtp_password": stringOption(&c.SMTPPassword),
		"allow_private": func(d *caddyfile.Dispenser) error {
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			for _, a := range args {
				if _, err := netip.ParsePrefix(a); err != nil && !strings.Contains(a, "{") {
					return d.Errf("allow_private: %q is not a CIDR", a)
				}
			}
			c.AllowPrivate = append(c.AllowPrivate, args...)
			return nil
		},
		"poll_interval": positiveDurationOption(&c.PollInterval),
		"max_attempts":  positiveIntOption(&c.MaxAttempts),
		"backoff":       positiveDurationOption(&c.Backoff),
	})
	return c, err
}
