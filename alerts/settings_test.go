package alerts

import (
	"strings"
	"testing"
)

func TestSettingsApply(t *testing.T) {
	lookup := func(configured, name string) string {
		if configured != "" {
			return configured
		}
		return map[string]string{EnvSMTPAddr: "mail.example:25", EnvAlertAllow: "10.0.0.0/8,192.168.0.0/16"}[name]
	}
	var cfg Config
	if err := (*Settings)(nil).Apply(&cfg, lookup); err != nil {
		t.Fatal(err)
	}
	if cfg.SMTP == nil || cfg.SMTP.From != "alerts@mail.example" || len(cfg.Allow) != 2 {
		t.Errorf("from the environment: SMTP %+v, allow %v", cfg.SMTP, cfg.Allow)
	}
	if err := (&Settings{AllowPrivate: []string{"10.0.0.1"}}).Apply(&Config{}, lookup); err == nil || !strings.Contains(err.Error(), "want a CIDR") {
		t.Errorf("an address that is not a CIDR: %v", err)
	}
}
