package alerts

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/duration"
)

// Environment variables of alerts, read when the config leaves a field
// empty (docs/accounts.md). Part of the operator contract.
const (
	EnvSMTPAddr     = "SWITCHYARD_SMTP_ADDR"
	EnvSMTPFrom     = "SWITCHYARD_SMTP_FROM"
	EnvSMTPUsername = "SWITCHYARD_SMTP_USERNAME"
	EnvSMTPPassword = "SWITCHYARD_SMTP_PASSWORD"
	EnvAlertAllow   = "SWITCHYARD_ALERT_WEBHOOK_ALLOW"
)

// Settings configure how balance alerts are delivered
// (docs/accounts.md). Accounts choose their thresholds and destinations
// in the admin API; every node that serves switchyard_admin sends due
// alerts.
type Settings struct {
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
	PollInterval duration.Duration `json:"poll_interval,omitempty"`
	// Attempts before a delivery is marked failed. Default: 8.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Wait after the first failed attempt; it doubles after each later
	// one, up to an hour. Default: 30s.
	Backoff duration.Duration `json:"backoff,omitempty"`
}

// Apply sets what c and the environment configure in cfg. lookup
// returns a configured value, its placeholders replaced, or when it is
// empty the environment variable env. c may be nil.
func (c *Settings) Apply(cfg *Config, lookup func(configured, env string) string) error {
	var ac Settings
	if c != nil {
		ac = *c
	}
	cfg.PollInterval, cfg.MaxAttempts, cfg.Backoff = time.Duration(ac.PollInterval), ac.MaxAttempts, time.Duration(ac.Backoff)
	if addr := lookup(ac.SMTPAddr, EnvSMTPAddr); addr != "" {
		from := lookup(ac.SMTPFrom, EnvSMTPFrom)
		if from == "" {
			host, _, _ := strings.Cut(addr, ":")
			from = "alerts@" + host
		}
		cfg.SMTP = &SMTPConfig{Addr: addr, From: from,
			Username: lookup(ac.SMTPUsername, EnvSMTPUsername), Password: lookup(ac.SMTPPassword, EnvSMTPPassword)}
	}
	allow := ac.AllowPrivate
	if len(allow) == 0 {
		if env := lookup("", EnvAlertAllow); env != "" {
			allow = strings.Split(env, ",")
		}
	}
	for _, a := range allow {
		p, err := netip.ParsePrefix(lookup(a, ""))
		if err != nil {
			return fmt.Errorf("alerts: allow_private %q: want a CIDR such as 10.0.0.0/8", a)
		}
		cfg.Allow = append(cfg.Allow, p)
	}
	return nil
}

// Start runs d until the returned stop is called, which returns once
// it has stopped.
func (d *Dispatcher) Start() (stop func()) {
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

// Dispatcher builds the alert dispatcher over cfg with c's channels.
func (c *Settings) Dispatcher(cfg Config, lookup func(configured, env string) string) (*Dispatcher, error) {
	if err := c.Apply(&cfg, lookup); err != nil {
		return nil, err
	}
	return New(cfg)
}
