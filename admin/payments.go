package admin

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/payments"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// webhook serves the payment providers' webhooks, which authenticate by
// signature, not by token, and reports whether r was one.
func (h *Handler) webhook(w http.ResponseWriter, r *http.Request) bool {
	var serve func(http.ResponseWriter, *http.Request)
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/admin/payments/stripe/webhook":
		serve = h.cfg.Payments.StripeWebhook
	case "/admin/payments/generic/webhook":
		serve = h.cfg.Payments.GenericWebhook
	default:
		return false
	}
	if h.cfg.Payments == nil {
		w.Header().Set("Cache-Control", "no-store")
		apierror.Write(w, payments.ErrNotConfigured)
		return true
	}
	serve(w, r)
	return true
}

// setDisabled: POST .../disable or .../enable, operators only.
func (q *request) setDisabled(a storage.Account, disabled bool) {
	action := "account.enable"
	if disabled {
		action = "account.disable"
	}
	acct, err := policy.SetAccountDisabled(q.ctx, q.h.cfg.Store, a.ID, disabled)
	q.audit(action, a.Name, a.ID, outcome(err), "")
	if err != nil {
		q.fail(err)
		return
	}
	out, err := q.accountNow(acct)
	q.answer(http.StatusOK, out, err)
}

// checkout: POST .../checkout {"usd", "return_url"?} creates a payment
// page for the account and answers its URL; the balance is credited when
// the provider confirms the payment (its webhook), not here.
func (q *request) checkout(a storage.Account) {
	var body struct {
		USD       string `json:"usd"`
		ReturnURL string `json:"return_url"`
	}
	err := q.decode(&body)
	var cents int64
	if err == nil && !q.h.cfg.Payments.CheckoutEnabled() {
		err = payments.ErrNotConfigured
	}
	if err == nil {
		cents, err = parseUSD(body.USD)
	}
	var back string
	if err == nil {
		back, err = q.returnURL(body.ReturnURL)
	}
	var sess payments.Session
	if err == nil {
		sess, err = q.h.cfg.Payments.Checkout(q.ctx, a, cents,
			withQuery(back, "checkout=success&session={CHECKOUT_SESSION_ID}")+"#/overview",
			withQuery(back, "checkout=cancelled")+"#/overview")
	}
	q.audit("checkout", a.Name, sess.ID, outcome(err), billing.FormatCents(cents))
	q.answer(http.StatusCreated, struct {
		ID          string `json:"id"`
		URL         string `json:"url"`
		AmountCents int64  `json:"amount_cents"`
	}{sess.ID, sess.URL, cents}, err)
}

// returnURL is where the provider sends the customer back: the URL the
// client gave, which must be on the site the request came to (the
// dashboard sends its own), else the dashboard beside this API.
func (q *request) returnURL(given string) (string, error) {
	scheme := "http"
	if q.r.TLS != nil {
		scheme = "https"
	}
	if given == "" {
		return scheme + "://" + q.r.Host + "/dashboard/", nil
	}
	u, err := url.Parse(given)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host != q.r.Host || u.User != nil || len(given) > 1024 {
		return "", apierror.InvalidRequest("invalid_return_url", "return_url is an http(s) URL on this gateway's own site.")
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func withQuery(base, query string) string {
	if strings.Contains(base, "?") {
		return base + "&" + query
	}
	return base + "?" + query
}

// receiptJSON is a ledger entry a payment provider caused.
type receiptJSON struct {
	ledgerJSON
	Provider string `json:"provider"`
}

// receipts: GET .../receipts?limit=, the entries payments made, newest
// first.
func (q *request) receipts(a storage.Account) {
	limit, err := limitParam(q.r, 50, 1000)
	if err != nil {
		q.fail(err)
		return
	}
	entries, err := q.h.cfg.Store.Receipts(q.ctx, a.ID, limit)
	q.answer(http.StatusOK, listEach(entries, func(e storage.LedgerEntry) receiptJSON {
		provider, _, _ := strings.Cut(strings.TrimPrefix(e.Reference, storage.PaymentReferencePrefix), ":")
		return receiptJSON{entryOut(e), provider}
	}), err)
}

// alertsJSON is an account's alert settings.
type alertsJSON struct {
	BelowCents     *int64 `json:"below_cents"`
	BelowPercent   *int64 `json:"below_percent"`
	ThresholdCents *int64 `json:"threshold_cents"`
	// KeySpendPercent alerts when a key's spend in its period reaches
	// this share (1 to 100) of its spend limit; null: never.
	KeySpendPercent *int64  `json:"key_spend_percent"`
	WebhookURL      string  `json:"webhook_url"`
	WebhookSecret   string  `json:"webhook_secret"`
	Email           string  `json:"email"`
	Below           bool    `json:"below"`
	FiredAt         *string `json:"fired_at"`
}

func alertsOut(s storage.AlertSettings) alertsJSON {
	out := alertsJSON{BelowCents: s.BelowCents, BelowPercent: s.BelowPercent, KeySpendPercent: s.KeySpendPercent, WebhookURL: s.WebhookURL,
		WebhookSecret: s.WebhookSecret, Email: s.Email, Below: !s.FiredAt.IsZero()}
	if t, ok := s.Threshold(); ok {
		out.ThresholdCents = &t
	}
	if !s.FiredAt.IsZero() {
		f := timeJSON(s.FiredAt)
		out.FiredAt = &f
	}
	return out
}

func (q *request) getAlerts(a storage.Account) {
	s, err := q.h.cfg.Store.AlertSettings(q.ctx, a.ID)
	q.answer(http.StatusOK, alertsOut(s), err)
}

// putAlerts: PUT .../alerts replaces the settings. A webhook keeps its
// signing secret while its URL stays; a new URL gets a new secret, and
// "rotate_secret" asks for one.
func (q *request) putAlerts(a storage.Account) {
	var body struct {
		BelowCents   *int64  `json:"below_cents"`
		BelowUSD     *string `json:"below_usd"`
		BelowPercent *int64  `json:"below_percent"`
		KeySpend     *int64  `json:"key_spend_percent"`
		WebhookURL   string  `json:"webhook_url"`
		Email        string  `json:"email"`
		RotateSecret bool    `json:"rotate_secret"`
	}
	err := q.decode(&body)
	if err == nil && body.BelowUSD != nil {
		if body.BelowCents != nil {
			err = apierror.InvalidRequest("invalid_alert", `Give the amount threshold as one of "below_cents" or "below_usd".`)
		} else {
			var c int64
			if c, err = billing.ParseUSD(*body.BelowUSD); err != nil {
				err = apierror.InvalidRequest("invalid_alert", `"below_usd" is a dollar amount such as "10.00".`)
			}
			body.BelowCents = &c
		}
	}
	if err == nil {
		err = q.checkAlerts(body.BelowCents, body.BelowPercent, body.KeySpend, body.WebhookURL, body.Email)
	}
	var saved storage.AlertSettings
	if err == nil {
		var old storage.AlertSettings
		old, err = q.h.cfg.Store.AlertSettings(q.ctx, a.ID)
		secret := old.WebhookSecret
		if body.WebhookURL == "" {
			secret = ""
		} else if secret == "" || body.RotateSecret || body.WebhookURL != old.WebhookURL {
			secret = "whsec_" + policy.RandomBase62(32)
		}
		if err == nil {
			saved, err = q.h.cfg.Store.SetAlertSettings(q.ctx, storage.AlertSettings{AccountID: a.ID, BelowCents: body.BelowCents,
				BelowPercent: body.BelowPercent, KeySpendPercent: body.KeySpend, WebhookURL: body.WebhookURL,
				WebhookSecret: secret, Email: body.Email})
		}
	}
	q.audit("alerts.update", a.Name, "", outcome(err), clipNote(body.WebhookURL))
	q.answer(http.StatusOK, alertsOut(saved), err)
}

func (q *request) checkAlerts(below, percent, keySpend *int64, webhook, email string) error {
	bad := func(msg string) error { return apierror.InvalidRequest("invalid_alert", msg) }
	switch {
	case below != nil && (*below < 0 || *below > 100_000_000):
		return bad("An amount threshold is 0 to $1,000,000.00.")
	case percent != nil && (*percent < 1 || *percent > 100):
		return bad("A share of the last top-up is 1 to 100 percent.")
	case keySpend != nil && (*keySpend < 1 || *keySpend > 100):
		return bad("A share of a key's spend limit is 1 to 100 percent.")
	case (below != nil || percent != nil || keySpend != nil) && webhook == "" && email == "":
		return bad("A threshold needs somewhere to send its alerts: a webhook_url or an email.")
	}
	if webhook != "" {
		if err := alerts.CheckWebhookURL(webhook); err != nil {
			return bad(err.Error() + ".")
		}
	}
	if email != "" {
		if !q.h.cfg.Alerts.EmailEnabled() {
			return bad("This gateway sends no email: no SMTP server is configured.")
		}
		if err := alerts.CheckEmail(email); err != nil {
			return bad(err.Error() + ".")
		}
	}
	return nil
}

// deliveryJSON is one alert delivery in the log.
type deliveryJSON struct {
	ID             string `json:"id"`
	Channel        string `json:"channel"`
	Type           string `json:"type"`
	BalanceCents   *int64 `json:"balance_cents,omitempty"` // balance.below
	ThresholdCents int64  `json:"threshold_cents"`
	// The key, its spend in the period and its limit, for
	// key.spend_limit_near.
	KeyID         string  `json:"key_id,omitempty"`
	KeyLabel      string  `json:"key_label,omitempty"`
	SpendCents    *int64  `json:"spend_cents,omitempty"`
	LimitCents    *int64  `json:"limit_cents,omitempty"`
	SpendPeriod   string  `json:"spend_period,omitempty"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	NextAttemptAt *string `json:"next_attempt_at"`
	LastError     string  `json:"last_error"`
	CreatedAt     string  `json:"created_at"`
	DeliveredAt   *string `json:"delivered_at"`
}

func deliveryOut(d storage.AlertDelivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Channel: d.Channel, ThresholdCents: d.ThresholdCents, Status: d.Status,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: timeJSON(d.CreatedAt)}
	if d.Kind == storage.AlertKeySpend {
		out.Type, out.KeyID, out.KeyLabel, out.SpendPeriod = "key.spend_limit_near", d.KeyID, d.KeyLabel, string(d.SpendPeriod)
		out.SpendCents, out.LimitCents = &d.SpendCents, &d.LimitCents
	} else {
		out.Type, out.BalanceCents = "balance.below", &d.BalanceCents
	}
	if d.Status == storage.AlertPending {
		t := timeJSON(d.NextAttemptAt)
		out.NextAttemptAt = &t
	}
	if !d.DeliveredAt.IsZero() {
		t := timeJSON(d.DeliveredAt)
		out.DeliveredAt = &t
	}
	return out
}

// alertDeliveries: GET .../alerts/deliveries?limit=, newest first.
func (q *request) alertDeliveries(a storage.Account) {
	limit, err := limitParam(q.r, 50, 1000)
	if err != nil {
		q.fail(err)
		return
	}
	ds, err := q.h.cfg.Store.AlertDeliveries(q.ctx, a.ID, limit)
	if errors.Is(err, storage.ErrNotFound) {
		err = nil
	}
	q.answer(http.StatusOK, listEach(ds, deliveryOut), err)
}
