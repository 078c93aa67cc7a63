package admin

import (
	"context"
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

// receipts: GET .../receipts?limit=&after=, the entries payments made,
// newest first, paged as every list.
func (q *request) receipts(a storage.Account) {
	p, err := pageParams(q.r, hasPrefixID("le_"))
	if err != nil {
		q.fail(err)
		return
	}
	var entries []storage.LedgerEntry
	if p.after == "" {
		entries, err = q.h.cfg.Store.Receipts(q.ctx, a.ID, p.limit+1)
	} else if entries, err = q.h.cfg.Store.ReceiptsAfter(q.ctx, a.ID, p.after, p.limit+1); errors.Is(err, storage.ErrNotFound) {
		err = unknownCursor("receipt")
	}
	if err != nil {
		q.fail(err)
		return
	}
	entries, more := trim(entries, p.limit)
	q.reply(http.StatusOK, pageEach(entries, more, func(e storage.LedgerEntry) receiptJSON {
		provider, _, _ := strings.Cut(strings.TrimPrefix(e.Reference, storage.PaymentReferencePrefix), ":")
		return receiptJSON{entryOut(e), provider}
	}, func(e storage.LedgerEntry) string { return e.ID }))
}

// AlertsJSON are an account's alert settings as GET and PUT .../alerts
// answer them, and `switchyard accounts alerts --json` prints them.
type AlertsJSON struct {
	// BelowCents fires an alert when the balance falls below this
	// amount; null: no amount threshold.
	BelowCents *int64 `json:"below_cents"`
	// BelowPercent fires when the balance falls below this share (1 to
	// 100) of the latest top-up; null: none.
	BelowPercent *int64 `json:"below_percent"`
	// ThresholdCents is the threshold in force (the larger of the two);
	// null without one.
	ThresholdCents *int64 `json:"threshold_cents"`
	// KeySpendPercent alerts when a key's spend in its period reaches
	// this share (1 to 100) of its spend limit; null: never.
	KeySpendPercent *int64 `json:"key_spend_percent"`
	WebhookURL      string `json:"webhook_url"`
	// WebhookSecret signs the webhook's deliveries; "" without a webhook.
	WebhookSecret string `json:"webhook_secret"`
	Email         string `json:"email"`
	// Below and FiredAt tell whether the balance is below the threshold
	// now, and since when.
	Below   bool   `json:"below"`
	FiredAt *int64 `json:"fired_at"`
}

// AlertsOf is s as JSON.
func AlertsOf(s storage.AlertSettings) AlertsJSON {
	out := AlertsJSON{BelowCents: s.BelowCents, BelowPercent: s.BelowPercent, KeySpendPercent: s.KeySpendPercent, WebhookURL: s.WebhookURL,
		WebhookSecret: s.WebhookSecret, Email: s.Email, Below: !s.FiredAt.IsZero()}
	if t, ok := s.Threshold(); ok {
		out.ThresholdCents = &t
	}
	out.FiredAt = UnixTimeOrNull(s.FiredAt)
	return out
}

func (q *request) getAlerts(a storage.Account) {
	s, err := q.h.cfg.Store.AlertSettings(q.ctx, a.ID)
	q.answer(http.StatusOK, AlertsOf(s), err)
}

// AlertsInput are alert settings as PUT .../alerts and `switchyard
// accounts alerts set` take them. They replace an account's settings
// whole: what is left out (null, "") is turned off.
type AlertsInput struct {
	// BelowCents or BelowUSD ("10.00"), not both: the amount threshold,
	// 0 to $1,000,000.
	BelowCents *int64  `json:"below_cents"`
	BelowUSD   *string `json:"below_usd"`
	// BelowPercent is a share (1 to 100) of the latest top-up.
	BelowPercent *int64 `json:"below_percent"`
	// KeySpend is key_spend_percent, 1 to 100.
	KeySpend   *int64 `json:"key_spend_percent"`
	WebhookURL string `json:"webhook_url"`
	Email      string `json:"email"`
	// RotateSecret asks for a new webhook signing secret.
	RotateSecret bool `json:"rotate_secret"`
}

// SetAlerts checks in and saves it as accountID's alert settings in st,
// refusing with 400 invalid_alert what cannot be delivered or read. A
// webhook keeps its signing secret while its URL stays; a new URL gets a
// new secret, and RotateSecret asks for one. emailEnabled tells whether
// an email address may be given (the gateway has an SMTP server).
func SetAlerts(ctx context.Context, st storage.Alerts, accountID string, in AlertsInput, emailEnabled bool) (storage.AlertSettings, error) {
	if in.BelowUSD != nil {
		if in.BelowCents != nil {
			return storage.AlertSettings{}, apierror.InvalidRequest("invalid_alert", `Give the amount threshold as one of "below_cents" or "below_usd".`)
		}
		c, err := billing.ParseUSD(*in.BelowUSD)
		if err != nil {
			return storage.AlertSettings{}, apierror.InvalidRequest("invalid_alert", `"below_usd" is a dollar amount such as "10.00".`)
		}
		in.BelowCents = &c
	}
	if err := checkAlerts(in, emailEnabled); err != nil {
		return storage.AlertSettings{}, err
	}
	old, err := st.AlertSettings(ctx, accountID)
	if err != nil {
		return storage.AlertSettings{}, err
	}
	secret := old.WebhookSecret
	if in.WebhookURL == "" {
		secret = ""
	} else if secret == "" || in.RotateSecret || in.WebhookURL != old.WebhookURL {
		secret = "whsec_" + policy.RandomBase62(32)
	}
	return st.SetAlertSettings(ctx, storage.AlertSettings{AccountID: accountID, BelowCents: in.BelowCents,
		BelowPercent: in.BelowPercent, KeySpendPercent: in.KeySpend, WebhookURL: in.WebhookURL,
		WebhookSecret: secret, Email: in.Email})
}

// putAlerts: PUT .../alerts replaces the settings (SetAlerts).
func (q *request) putAlerts(a storage.Account) {
	var body AlertsInput
	err := q.decode(&body)
	var saved storage.AlertSettings
	if err == nil {
		saved, err = SetAlerts(q.ctx, q.h.cfg.Store, a.ID, body, q.h.cfg.Alerts.EmailEnabled())
	}
	q.audit("alerts.update", a.Name, "", outcome(err), clipNote(body.WebhookURL))
	q.answer(http.StatusOK, AlertsOf(saved), err)
}

func checkAlerts(in AlertsInput, emailEnabled bool) error {
	bad := func(msg string) error { return apierror.InvalidRequest("invalid_alert", msg) }
	below, percent, keySpend := in.BelowCents, in.BelowPercent, in.KeySpend
	switch {
	case below != nil && (*below < 0 || *below > 100_000_000):
		return bad("An amount threshold is 0 to $1,000,000.00.")
	case percent != nil && (*percent < 1 || *percent > 100):
		return bad("A share of the last top-up is 1 to 100 percent.")
	case keySpend != nil && (*keySpend < 1 || *keySpend > 100):
		return bad("A share of a key's spend limit is 1 to 100 percent.")
	case (below != nil || percent != nil || keySpend != nil) && in.WebhookURL == "" && in.Email == "":
		return bad("A threshold needs somewhere to send its alerts: a webhook_url or an email.")
	}
	if in.WebhookURL != "" {
		if err := alerts.CheckWebhookURL(in.WebhookURL); err != nil {
			return bad(err.Error() + ".")
		}
	}
	if in.Email != "" {
		if !emailEnabled {
			return bad("This gateway sends no email: no SMTP server is configured.")
		}
		if err := alerts.CheckEmail(in.Email); err != nil {
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
	KeyID       string `json:"key_id,omitempty"`
	KeyLabel    string `json:"key_label,omitempty"`
	SpendCents  *int64 `json:"spend_cents,omitempty"`
	LimitCents  *int64 `json:"limit_cents,omitempty"`
	SpendPeriod string `json:"spend_period,omitempty"`
	// What a failed auto top-up tried to add, and why it failed, for
	// auto_topup.failed.
	AmountCents   *int64 `json:"amount_cents,omitempty"`
	Reason        string `json:"reason,omitempty"`
	Status        string `json:"status"`
	Attempts      int    `json:"attempts"`
	NextAttemptAt *int64 `json:"next_attempt_at"`
	LastError     string `json:"last_error"`
	CreatedAt     int64  `json:"created_at"`
	DeliveredAt   *int64 `json:"delivered_at"`
}

func deliveryOut(d storage.AlertDelivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Channel: d.Channel, ThresholdCents: d.ThresholdCents, Status: d.Status,
		Attempts: d.Attempts, LastError: d.LastError, CreatedAt: unixTime(d.CreatedAt)}
	switch d.Kind {
	case storage.AlertKeySpend:
		out.Type, out.KeyID, out.KeyLabel, out.SpendPeriod = "key.spend_limit_near", d.KeyID, d.KeyLabel, string(d.SpendPeriod)
		out.SpendCents, out.LimitCents = &d.SpendCents, &d.LimitCents
	case storage.AlertAutoTopUpFailed:
		out.Type, out.BalanceCents, out.AmountCents, out.Reason = "auto_topup.failed", &d.BalanceCents, &d.LimitCents, d.Detail
	default:
		out.Type, out.BalanceCents = "balance.below", &d.BalanceCents
	}
	if d.Status == storage.AlertPending {
		out.NextAttemptAt = UnixTimeOrNull(d.NextAttemptAt)
	}
	out.DeliveredAt = UnixTimeOrNull(d.DeliveredAt)
	return out
}

// alertDeliveries: GET .../alerts/deliveries?limit=&after=, newest
// first, paged as every list.
func (q *request) alertDeliveries(a storage.Account) {
	p, err := pageParams(q.r, hasPrefixID("alrt_"))
	if err != nil {
		q.fail(err)
		return
	}
	var ds []storage.AlertDelivery
	if p.after == "" {
		ds, err = q.h.cfg.Store.AlertDeliveries(q.ctx, a.ID, p.limit+1)
	} else if ds, err = q.h.cfg.Store.AlertDeliveriesAfter(q.ctx, a.ID, p.after, p.limit+1); errors.Is(err, storage.ErrNotFound) {
		err = unknownCursor("alert delivery")
	}
	if errors.Is(err, storage.ErrNotFound) {
		err = nil // an account without alert settings has no deliveries
	}
	if err != nil {
		q.fail(err)
		return
	}
	ds, more := trim(ds, p.limit)
	q.reply(http.StatusOK, pageEach(ds, more, deliveryOut, func(d storage.AlertDelivery) string { return d.ID }))
}
