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
	Email     string
	UpdatedAt time.Time
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
	Kind           string // "balance_below"
	BalanceCents   int64
	ThresholdCents int64
	Status         string
	Attempts       int
	NextAttemptAt  time.Time
	LastError      string
	CreatedAt      time.Time
	DeliveredAt    time.Time
}
