package payments

import (
	"strings"
	"testing"
)

// env is a lookup over a fixed environment.
func env(vars map[string]string) func(configured, env string) string {
	return func(configured, name string) string {
		if configured != "" {
			return configured
		}
		return vars[name]
	}
}

func TestSettingsProviders(t *testing.T) {
	var cfg Config
	on, err := (*Settings)(nil).Providers(&cfg, env(nil))
	if on || err != nil {
		t.Errorf("nothing configured: on %v, %v", on, err)
	}
	cfg = Config{}
	on, err = (&Settings{Stripe: &StripeSettings{SecretKey: "sk_test_1"}}).Providers(&cfg, env(map[string]string{EnvStripeWebhookSecret: "whsec_1"}))
	if !on || err != nil || cfg.Stripe == nil || cfg.Stripe.SecretKey != "sk_test_1" || cfg.Stripe.WebhookSecret != "whsec_1" {
		t.Errorf("Stripe from config and environment: on %v, %v, %+v", on, err, cfg.Stripe)
	}
	if _, err := (&Settings{Stripe: &StripeSettings{SecretKey: "sk_test_1"}}).Providers(&Config{}, env(nil)); err == nil || !strings.Contains(err.Error(), "needs both") {
		t.Errorf("Stripe without a webhook secret: %v", err)
	}
	if _, err := (&Settings{Generic: &GenericSettings{Secret: "short"}}).Providers(&Config{}, env(nil)); err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("a short generic secret: %v", err)
	}
}
