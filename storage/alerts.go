package storage

import (
	"context"
	"time"
)

// Alerts keeps accounts' balance alerts: their thresholds and
// destinations, and the deliveries queued when a balance crossed one.
//
// A delivery is queued by the transaction that moved the balance below
// the threshold (Post, SettleUsage, SettleUsageBatch,
// RecordPaymentEvent), under the account row's lock: one crossing queues
// one alert per channel, whichever node or process made it. The account
// is then "below" until a transaction leaves the balance at or above the
// threshold, which re-arms it; charges while below queue nothing.
type Alerts interface {
	// SetAlertSettings replaces an account's alert settings and re-arms
	// it: the next balance change that leaves the balance below the
	// threshold queues an alert. ErrNotFound if there is no live account
	// with this id.
	SetAlertSettings(ctx context.Context, s AlertSettings) (AlertSettings, error)
	// AlertSettings returns an account's settings; an account that never
	// set any has the zero settings (with its AccountID).
	AlertSettings(ctx context.Context, accountID string) (AlertSettings, error)
	// ClaimAlertDelivery takes the oldest pending delivery due at now
	// that no one holds, holds it until now+lease and counts the
	// attempt; ErrNotFound when there is none. Two claimers, in any
	// processes, never hold one delivery at once.
	ClaimAlertDelivery(ctx context.Context, now time.Time, lease time.Duration) (AlertDelivery, error)
	// FinishAlertDelivery records how an attempt at a claimed delivery
	// ended: delivered (Status "delivered"), failed for good ("failed"),
	// or to be tried again at next ("pending"), with lastError.
	FinishAlertDelivery(ctx context.Context, id, status, lastError string, next time.Time) error
	// AlertDeliveries lists up to limit deliveries of an account, newest
	// first; all of them if limit <= 0.
	AlertDeliveries(ctx context.Context, accountID string, limit int) ([]AlertDelivery, error)
	// AlertDeliveriesAfter lists up to limit deliveries older than the
	// delivery after, in AlertDeliveries' order; ErrNotFound when after is
	// not one of the account's deliveries.
	AlertDeliveriesAfter(ctx context.Context, accountID, after string, limit int) ([]AlertDelivery, error)
}

// AlertSettings are an account's balance alerts. An alert fires when the
// balance falls below the larger of BelowCents and BelowPercent of the
// latest top-up; a nil threshold is not set, and with neither set no
// alert fires.
type AlertSettings struct {
	AccountID    string
	BelowCents   *int64
	BelowPercent *int64 // 1 to 100
	// WebhookURL receives a signed POST per alert; "" for none.
	WebhookURL string
	// WebhookSecret signs the webhook's deliveries.
	WebhookSecret string
	// Email receives a message per alert; "" for none.
	Email string
	// KeySpendPercent (1 to 100) alerts when a key's spend in its
	// period reaches this share of its spend limit: once per key and
	// period, again if the spend falls back under the share (the limit
	// was raised) and reaches it again. Nil: no key spend alerts. Keys
	// without a spend limit never alert.
	KeySpendPercent *int64
	UpdatedAt       time.Time
	// LastTopUpCents is the amount of the account's latest top-up, which
	// BelowPercent is a share of. Read only.
	LastTopUpCents int64
	// FiredAt is when the balance last fell below the threshold, zero
	// while it has not or has risen above it since. Read only.
	FiredAt time.Time
}

// Threshold is the balance below which an alert fires, and whether any
// threshold is set.
func (s AlertSettings) Threshold() (int64, bool) {
	return AlertThreshold(s.BelowCents, s.BelowPercent, s.LastTopUpCents)
}

// AlertThreshold is the larger of below and percent of lastTopUp, and
// whether either is set.
func AlertThreshold(below, percent *int64, lastTopUp int64) (int64, bool) {
	var t int64
	set := false
	if below != nil {
		t, set = *below, true
	}
	if percent != nil {
		p := lastTopUp * *percent / 100
		if !set || p > t {
			t = p
		}
		set = true
	}
	return t, set
}

// Alert delivery channels and statuses.
const (
	AlertWebhook = "webhook"
	AlertEmail   = "email"

	AlertBalanceBelow = "balance_below"
	AlertKeySpend     = "key_spend"

	AlertPending   = "pending"
	AlertDelivered = "delivered"
	AlertFailed    = "failed"
)

// AlertDelivery is one alert to send on one channel, and how sending it
// went.
type AlertDelivery struct {
	ID             string
	AccountID      string
	AccountName    string
	Channel        string // AlertWebhook or AlertEmail
	Kind           string // AlertBalanceBelow or AlertKeySpend
	BalanceCents   int64  // AlertBalanceBelow: the balance that crossed
	ThresholdCents int64  // the balance's threshold, or the key's share of its limit
	// KeyID, KeyLabel, SpendCents, LimitCents and SpendPeriod describe
	// the key of an AlertKeySpend: its spend in the period that reached
	// ThresholdCents, and its limit.
	KeyID       string
	KeyLabel    string
	SpendCents  int64
	LimitCents  int64
	SpendPeriod SpendPeriod
	// Detail is why an AlertAutoTopUpFailed's payment failed, and
	// Failures how many attempts in a row have (LimitCents holds the
	// amount tried, ThresholdCents the auto top-up's threshold).
	Detail        string
	Failures      int64
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	DeliveredAt   time.Time
}

// KeySpendState is a key's spend alert as the transaction that commits
// its charges leaves it.
type KeySpendState struct {
	LimitCents int64 // 0: no spend limit
	SpendCents int64 // the key's spend in the period starting at PeriodStart
	// PeriodStart is the start of the key's current spend period.
	PeriodStart time.Time
	// FiredFor is the start of the period the alert last fired in; zero
	// if it never did or was re-armed since.
	FiredFor time.Time
}

// KeySpendThreshold is percent of limit, rounded up, so that a share
// is never reached before it is spent.
func KeySpendThreshold(limit, percent int64) int64 {
	return (limit*percent + 99) / 100
}

// KeySpendDecision says what a key's spend alert does after a charge:
// fire when the spend reached the share of the limit and the alert has
// not fired in this period; re-arm when it fired in this period but the
// spend is under the share again (the limit was raised). A new period
// arms it by itself: FiredFor then names an earlier one.
func KeySpendDecision(st KeySpendState, percent *int64) (fire, rearm bool) {
	if st.LimitCents <= 0 || percent == nil || *percent <= 0 {
		return false, false
	}
	reached := st.SpendCents >= KeySpendThreshold(st.LimitCents, *percent)
	firedNow := !st.FiredFor.IsZero() && st.FiredFor.Equal(st.PeriodStart)
	return reached && !firedNow, !reached && firedNow
}
