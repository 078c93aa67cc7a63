// Package alerts delivers accounts' balance alerts and key spend alerts.
// The store queues a delivery per destination in the transaction that
// moves a balance below its threshold, or a key's spend in its period to
// the account's share of the key's limit (storage.Alerts), so an alert is
// queued once per crossing whichever node made it; a Dispatcher on every node that serves
// the admin API claims due deliveries (one claimer each, by lease) and
// sends them: a webhook POST signed like Stripe's (internal/hmacsig) or
// an email over SMTP, retried with exponential backoff, every attempt's
// outcome kept in the delivery log (docs/accounts.md).
package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/storage"
)

// Config is what a Dispatcher works with.
type Config struct {
	// Store holds the deliveries and the destinations. Required.
	Store storage.Store
	// SMTP sends email alerts. Nil: email destinations are refused when
	// set, and deliveries queued for one fail.
	SMTP *SMTPConfig
	// Allow lists the addresses webhooks may reach besides public ones
	// (loopback, private and link-local addresses are refused otherwise,
	// so that an account's webhook cannot reach the gateway's own
	// network). Default: none.
	Allow []netip.Prefix
	// PollInterval is how often due deliveries are looked for. Default:
	// 2s.
	PollInterval time.Duration
	// MaxAttempts is how many times a delivery is tried before it is
	// marked failed. Default: 8.
	MaxAttempts int
	// Backoff is the wait after the first failed attempt; each later one
	// doubles it, up to an hour. Default: 30s.
	Backoff time.Duration
	// Timeout bounds one attempt. Default: 10s.
	Timeout time.Duration
	// Now is the dispatcher's clock. Default: time.Now.
	Now func() time.Time
	// Logger receives failed attempts. Default: no logging.
	Logger *zap.Logger
}

// Dispatcher sends queued alert deliveries. It is safe for concurrent
// use; several dispatchers, in any processes, share the queue.
type Dispatcher struct {
	cfg    Config
	client *http.Client
}

// New fills cfg's defaults and returns a Dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil {
		return nil, errors.New("alerts: Store is required")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 30 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	d := &Dispatcher{cfg: cfg}
	dialer := &net.Dialer{Timeout: cfg.Timeout, Control: d.control}
	d.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would connect out of the address check's sight
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConns:          8,
			IdleConnTimeout:       30 * time.Second,
		},
		// A redirect is a failed delivery: following it would send the
		// signed body to an address nobody configured.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       cfg.Timeout,
	}
	return d, nil
}

// EmailEnabled reports whether email destinations can be delivered.
func (d *Dispatcher) EmailEnabled() bool { return d != nil && d.cfg.SMTP != nil }

// control refuses connections to addresses that are not public, unless
// allowed: it sees the address the socket really connects to, after DNS.
func (d *Dispatcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("the address %q is not valid", address)
	}
	return d.allowed(ap.Addr().Unmap())
}

func (d *Dispatcher) allowed(a netip.Addr) error {
	for _, p := range d.cfg.Allow {
		if p.Contains(a) {
			return nil
		}
	}
	if !a.IsGlobalUnicast() || a.IsPrivate() || cgnat.Contains(a) {
		return fmt.Errorf("the address %s is not public (allow it with alerts' allow_private)", a)
	}
	return nil
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// CheckWebhookURL refuses a webhook URL that is not http(s) with a host.
func CheckWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(raw) > 2048 {
		return errors.New("a webhook URL is an http or https URL without credentials, at most 2048 characters")
	}
	return nil
}

// Run sends due deliveries every PollInterval until ctx is done. A panic
// is recovered and the loop started again.
func (d *Dispatcher) Run(ctx context.Context) {
	guard.Loop(ctx, "alerts dispatcher", d.cfg.PollInterval, func(ctx context.Context) {
		t := time.NewTicker(d.cfg.PollInterval)
		defer t.Stop()
		for {
			d.DeliverDue(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// DeliverDue sends every delivery due now, one after another, and
// returns how many attempts it made.
func (d *Dispatcher) DeliverDue(ctx context.Context) int {
	n := 0
	for ctx.Err() == nil {
		now := d.cfg.Now()
		// The lease outlasts an attempt, so that no other node takes
		// the delivery while this one is still sending it.
		del, err := d.cfg.Store.ClaimAlertDelivery(ctx, now, 3*d.cfg.Timeout)
		if errors.Is(err, storage.ErrNotFound) {
			return n
		}
		if err != nil {
			d.cfg.Logger.Error("claiming an alert delivery failed", zap.Error(err))
			return n
		}
		n++
		d.attempt(ctx, del)
	}
	return n
}

// attempt sends one delivery and records how it went.
func (d *Dispatcher) attempt(ctx context.Context, del storage.AlertDelivery) {
	var err error
	if perr := guard.Run("alert delivery", func() { err = d.send(ctx, del) }); perr != nil {
		err = perr
	}
	status, next, msg := storage.AlertDelivered, d.cfg.Now(), ""
	if err != nil {
		msg = err.Error()
		if len(msg) > 500 {
			msg = msg[:500]
		}
		status = storage.AlertPending
		next = d.cfg.Now().Add(d.backoff(del.Attempts))
		if del.Attempts >= d.cfg.MaxAttempts || errors.Is(err, errPermanent) {
			status = storage.AlertFailed
		}
		d.cfg.Logger.Warn("alert delivery failed", zap.String("delivery", del.ID), zap.String("account", del.AccountName),
			zap.String("channel", del.Channel), zap.Int("attempt", del.Attempts), zap.String("status", status), zap.Error(err))
	}
	if err := d.cfg.Store.FinishAlertDelivery(context.WithoutCancel(ctx), del.ID, status, msg, next); err != nil {
		d.cfg.Logger.Error("recording an alert delivery failed", zap.String("delivery", del.ID), zap.Error(err))
	}
}

// backoff is the wait after attempt n (1 for the first) failed.
func (d *Dispatcher) backoff(n int) time.Duration {
	w := d.cfg.Backoff
	for i := 1; i < n && w < time.Hour; i++ {
		w *= 2
	}
	return min(w, time.Hour)
}

// errPermanent marks a failure that retrying cannot mend.
var errPermanent = errors.New("not retried")

func (d *Dispatcher) send(ctx context.Context, del storage.AlertDelivery) error {
	settings, err := d.cfg.Store.AlertSettings(ctx, del.AccountID)
	if err != nil {
		return err
	}
	switch del.Channel {
	case storage.AlertWebhook:
		if settings.WebhookURL == "" {
			return fmt.Errorf("the account has no webhook any more: %w", errPermanent)
		}
		return d.post(ctx, settings, del)
	case storage.AlertEmail:
		if settings.Email == "" {
			return fmt.Errorf("the account has no email address any more: %w", errPermanent)
		}
		if d.cfg.SMTP == nil {
			return fmt.Errorf("no SMTP server is configured: %w", errPermanent)
		}
		return d.cfg.SMTP.send(ctx, d.cfg.Timeout, settings.Email, del)
	}
	return fmt.Errorf("unknown channel %q: %w", del.Channel, errPermanent)
}

// Payload is the JSON body of an alert webhook (docs/accounts.md).
type Payload struct {
	ID             string `json:"id"`
	Type           string `json:"type"` // "balance.below"
	Account        string `json:"account"`
	AccountID      string `json:"account_id"`
	BalanceCents   int64  `json:"balance_cents"`
	ThresholdCents int64  `json:"threshold_cents"`
	CreatedAt      int64  `json:"created_at"` // Unix seconds
	Attempt        int    `json:"attempt"`
}

func payload(del storage.AlertDelivery) Payload {
	return Payload{ID: del.ID, Type: "balance.below", Account: del.AccountName, AccountID: del.AccountID,
		BalanceCents: del.BalanceCents, ThresholdCents: del.ThresholdCents,
		CreatedAt: del.CreatedAt.Unix(), Attempt: del.Attempts}
}

// KeySpendPayload is the JSON body of a key spend alert's webhook: the
// key's spend in its period reached ThresholdCents, the account's share
// of LimitCents.
type KeySpendPayload struct {
	ID             string `json:"id"`
	Type           string `json:"type"` // "key.spend_limit_near"
	Account        string `json:"account"`
	AccountID      string `json:"account_id"`
	KeyID          string `json:"key_id"`
	KeyLabel       string `json:"key_label"`
	SpendCents     int64  `json:"spend_cents"`
	ThresholdCents int64  `json:"threshold_cents"`
	LimitCents     int64  `json:"limit_cents"`
	SpendPeriod    string `json:"spend_period"` // "day" or "month" (UTC)
	CreatedAt      int64  `json:"created_at"`   // Unix seconds
	Attempt        int    `json:"attempt"`
}

func keySpendPayload(del storage.AlertDelivery) KeySpendPayload {
	return KeySpendPayload{ID: del.ID, Type: "key.spend_limit_near", Account: del.AccountName, AccountID: del.AccountID,
		KeyID: del.KeyID, KeyLabel: del.KeyLabel, SpendCents: del.SpendCents, ThresholdCents: del.ThresholdCents,
		LimitCents: del.LimitCents, SpendPeriod: string(del.SpendPeriod),
		CreatedAt: del.CreatedAt.Unix(), Attempt: del.Attempts}
}

// AutoTopUpFailedPayload is the JSON body of the webhook sent when an
// automatic top-up's payment failed; at storage.AutoTopUpMaxFailures
// failures in a row TurnedOff is true and no more are tried until the
// owner turns auto top-up on again.
type AutoTopUpFailedPayload struct {
	ID             string `json:"id"`
	Type           string `json:"type"` // "auto_topup.failed"
	Account        string `json:"account"`
	AccountID      string `json:"account_id"`
	AmountCents    int64  `json:"amount_cents"`    // what the attempt tried to add
	BalanceCents   int64  `json:"balance_cents"`   // the balance when it failed
	ThresholdCents int64  `json:"threshold_cents"` // the auto top-up's threshold
	Reason         string `json:"reason"`
	Failures       int64  `json:"failures"` // consecutive
	TurnedOff      bool   `json:"turned_off"`
	CreatedAt      int64  `json:"created_at"` // Unix seconds
	Attempt        int    `json:"attempt"`
}

func autoTopUpFailedPayload(del storage.AlertDelivery) AutoTopUpFailedPayload {
	return AutoTopUpFailedPayload{ID: del.ID, Type: "auto_topup.failed", Account: del.AccountName, AccountID: del.AccountID,
		AmountCents: del.LimitCents, BalanceCents: del.BalanceCents, ThresholdCents: del.ThresholdCents, Reason: del.Detail,
		Failures: del.Failures, TurnedOff: del.Failures >= storage.AutoTopUpMaxFailures,
		CreatedAt: del.CreatedAt.Unix(), Attempt: del.Attempts}
}

// webhookBody is the JSON a delivery posts, by its kind.
func webhookBody(del storage.AlertDelivery) ([]byte, error) {
	switch del.Kind {
	case storage.AlertKeySpend:
		return json.Marshal(keySpendPayload(del))
	case storage.AlertAutoTopUpFailed:
		return json.Marshal(autoTopUpFailedPayload(del))
	}
	return json.Marshal(payload(del))
}

// post sends the webhook; any 2xx answer delivers it.
func (d *Dispatcher) post(ctx context.Context, s storage.AlertSettings, del storage.AlertDelivery) error {
	body, err := webhookBody(del)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%v: %w", err, errPermanent)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Switchyard-Alerts/1")
	req.Header.Set(hmacsig.Header, hmacsig.Sign([]byte(s.WebhookSecret), d.cfg.Now(), body))
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}
