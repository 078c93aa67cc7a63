package caddymodules

import (
	"net/netip"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/internal/configcheck"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// paymentsService builds the providers the config and environment turn
// on; nil when none is.
func paymentsService(c *payments.Settings, store storage.Store, app *App, logger *zap.Logger) (*payments.Service, error) {
	debiter, _ := app.limiter.(limits.Debiter)
	return c.Service(payments.Config{Store: store, Profile: app.Profile(), Logger: logger}, debiter, lookup(caddy.NewReplacer()))
}

// alertDispatcher builds the alert dispatcher.
func alertDispatcher(c *alerts.Settings, store storage.Store, logger *zap.Logger) (*alerts.Dispatcher, error) {
	return c.Dispatcher(alerts.Config{Store: store, Logger: logger}, lookup(caddy.NewReplacer()))
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
func unmarshalPayments(d *caddyfile.Dispenser) (*payments.Settings, error) {
	c := new(payments.Settings)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	nesting := d.Nesting()
	err := blockOptions(d, nesting, "payments", map[string]optionReader{
		"stripe": subBlockOption(&c.Stripe, func(d *caddyfile.Dispenser) (*payments.StripeSettings, error) {
			s := new(payments.StripeSettings)
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			return s, blockOptions(d, d.Nesting(), "stripe", map[string]optionReader{
				"secret_key":     stringOption(&s.SecretKey),
				"webhook_secret": stringOption(&s.WebhookSecret),
				"api_url":        checkedOption(&s.APIURL, configcheck.URL("https://api.stripe.com", "http", "https")),
				"product_name":   stringOption(&s.ProductName),
				"tolerance":      positiveDurationOption(&s.Tolerance),
			})
		}),
		"generic": subBlockOption(&c.Generic, func(d *caddyfile.Dispenser) (*payments.GenericSettings, error) {
			g := new(payments.GenericSettings)
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
func unmarshalAlerts(d *caddyfile.Dispenser) (*alerts.Settings, error) {
	c := new(alerts.Settings)
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
