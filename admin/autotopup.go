package admin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// AutoTopUpJSON is an account's auto top-up as GET and PUT
// .../autotopup answer it (docs/accounts.md).
type AutoTopUpJSON struct {
	Enabled        bool  `json:"enabled"`
	ThresholdCents int64 `json:"threshold_cents"`
	AmountCents    int64 `json:"amount_cents"`
	// PaymentMethodSaved: a Checkout paid while auto top-up was on saved
	// a card; until one has, nothing is charged.
	PaymentMethodSaved bool `json:"payment_method_saved"`
	// InFlight: an attempt waits for Stripe's answer.
	InFlight bool `json:"in_flight"`
	// Failures in a row, and the last one's reason; at MaxFailures auto
	// top-up turns itself off.
	Failures    int64  `json:"failures"`
	MaxFailures int64  `json:"max_failures"`
	LastError   string `json:"last_error"`
}

// AutoTopUpOf is a as JSON.
func AutoTopUpOf(a storage.AutoTopUp) AutoTopUpJSON {
	return AutoTopUpJSON{Enabled: a.Enabled, ThresholdCents: a.ThresholdCents, AmountCents: a.AmountCents,
		PaymentMethodSaved: a.PaymentMethodID != "", InFlight: a.InFlight != "", Failures: a.Failures,
		MaxFailures: storage.AutoTopUpMaxFailures, LastError: a.LastError}
}

// AutoTopUpInput is what PUT .../autotopup and `switchyard accounts
// autotopup set` take. It replaces the settings whole.
type AutoTopUpInput struct {
	Enabled bool `json:"enabled"`
	// ThresholdCents or ThresholdUSD ("5.00"), not both: a top-up starts
	// when a charge leaves the balance below it. 1 cent to $1,000,000.
	ThresholdCents *int64  `json:"threshold_cents"`
	ThresholdUSD   *string `json:"threshold_usd"`
	// AmountCents or AmountUSD: what one top-up adds, within the
	// revision's top-up bounds ($5 to $1,000).
	AmountCents *int64  `json:"amount_cents"`
	AmountUSD   *string `json:"amount_usd"`
}

// errNoAutoTopUp answers auto top-up on a store that does not keep it.
var errNoAutoTopUp = apierror.New(http.StatusNotImplemented, apierror.TypeInvalidRequest, "auto_topup_unavailable",
	"This gateway's store keeps no auto top-up settings.")

// SetAutoTopUp checks in against profile and saves it as accountID's
// auto top-up in st, refusing with 400 invalid_auto_topup what is out of
// bounds. Turning it on needs a payment provider that can charge a saved
// card (stripe): 501 payments_not_configured otherwise.
func SetAutoTopUp(ctx context.Context, st storage.Store, profile policy.Profile, accountID string, in AutoTopUpInput, canCharge bool) (storage.AutoTopUp, error) {
	at, ok := st.(storage.AutoTopUps)
	if !ok {
		return storage.AutoTopUp{}, errNoAutoTopUp
	}
	bad := func(msg string) error { return apierror.InvalidRequest("invalid_auto_topup", msg) }
	pick := func(name string, cents *int64, usd *string) (int64, error) {
		switch {
		case cents != nil && usd != nil:
			return 0, bad(fmt.Sprintf(`Give the %s as one of "%s_cents" or "%s_usd".`, name, name, name))
		case usd != nil:
			c, err := billing.ParseUSD(*usd)
			if err != nil {
				return 0, bad(fmt.Sprintf(`"%s_usd" is a dollar amount such as "5.00".`, name))
			}
			return c, nil
		case cents != nil:
			return *cents, nil
		}
		return 0, nil
	}
	threshold, err := pick("threshold", in.ThresholdCents, in.ThresholdUSD)
	if err != nil {
		return storage.AutoTopUp{}, err
	}
	amount, err := pick("amount", in.AmountCents, in.AmountUSD)
	if err != nil {
		return storage.AutoTopUp{}, err
	}
	switch {
	case threshold < 0 || threshold > 100_000_000:
		return storage.AutoTopUp{}, bad("The threshold is 1 cent to $1,000,000.00.")
	case amount != 0 && (amount < profile.MinTopUpCents || amount > profile.MaxTopUpCents):
		return storage.AutoTopUp{}, bad(fmt.Sprintf("A top-up adds %s to %s.", billing.FormatCents(profile.MinTopUpCents), billing.FormatCents(profile.MaxTopUpCents)))
	case in.Enabled && (threshold == 0 || amount == 0):
		return storage.AutoTopUp{}, bad("Turning auto top-up on needs a threshold and an amount.")
	case in.Enabled && !canCharge:
		return storage.AutoTopUp{}, apierror.New(http.StatusNotImplemented, apierror.TypeInvalidRequest, "payments_not_configured",
			"Auto top-up needs Stripe configured on this gateway.")
	}
	return at.SetAutoTopUpSettings(ctx, accountID, in.Enabled, threshold, amount)
}

func (q *request) getAutoTopUp(a storage.Account) {
	at, ok := q.h.cfg.Store.(storage.AutoTopUps)
	if !ok {
		q.fail(errNoAutoTopUp)
		return
	}
	s, err := at.AutoTopUp(q.ctx, a.ID)
	q.answer(http.StatusOK, AutoTopUpOf(s), err)
}

// putAutoTopUp: PUT .../autotopup replaces the settings (SetAutoTopUp).
func (q *request) putAutoTopUp(a storage.Account) {
	var body AutoTopUpInput
	err := q.decode(&body)
	var saved storage.AutoTopUp
	if err == nil {
		saved, err = SetAutoTopUp(q.ctx, q.h.cfg.Store, q.h.cfg.Profile, a.ID, body, q.h.cfg.Payments.AutoTopUps() != nil)
	}
	// What was asked for, so that a refusal says what it refused.
	q.audit("autotopup.update", a.Name, "", outcome(err), clipNote(fmt.Sprintf("enabled=%t threshold=%s amount=%s",
		body.Enabled, auditAmount(body.ThresholdCents, body.ThresholdUSD), auditAmount(body.AmountCents, body.AmountUSD))))
	q.answer(http.StatusOK, AutoTopUpOf(saved), err)
}

// auditAmount is an amount given as cents or dollars, as the audit log
// notes it.
func auditAmount(cents *int64, usd *string) string {
	switch {
	case cents != nil:
		return billing.FormatCents(*cents)
	case usd != nil:
		return "$" + *usd
	}
	return "-"
}
