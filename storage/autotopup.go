package storage

import (
	"context"
	"time"
)

// AutoTopUpMaxFailures is how many consecutive failed automatic top-ups
// turn an account's auto top-up off: a card declined three times in a row
// is not going to pay the fourth time, and each attempt bothers its
// owner's bank.
const AutoTopUpMaxFailures = 3

// AlertAutoTopUpFailed is the alert kind sent when an automatic top-up
// failed (AlertDelivery.Detail says why).
const AlertAutoTopUpFailed = "auto_topup_failed"

// AutoTopUps keeps accounts' automatic top-ups: the settings, the saved
// payment method, and the one attempt that may be in flight. It is not
// part of Store: only the SQL stores keep it, and the payments package
// asks for it by type.
type AutoTopUps interface {
	// AutoTopUp returns an account's auto top-up; an account that never
	// set one has the zero value (off). ErrNotFound if the account never
	// existed.
	AutoTopUp(ctx context.Context, accountID string) (AutoTopUp, error)
	// SetAutoTopUpSettings writes enabled, threshold and amount, and
	// resets the failure count (an owner turning it back on gets
	// AutoTopUpMaxFailures tries again). ErrNotFound if there is no live
	// account with this id.
	SetAutoTopUpSettings(ctx context.Context, accountID string, enabled bool, thresholdCents, amountCents int64) (AutoTopUp, error)
	// SetAutoTopUpCustomer records the provider's customer of an account
	// (created once, reused by every later payment page).
	SetAutoTopUpCustomer(ctx context.Context, accountID, customerID string) error
	// SaveAutoTopUpPaymentMethod records the payment method a payment
	// saved for later, with its customer.
	SaveAutoTopUpPaymentMethod(ctx context.Context, accountID, customerID, paymentMethodID string) error
	// ClaimAutoTopUp starts an attempt, atomically against every other
	// claimer in any process, and returns it, when the account's auto
	// top-up is on, has a payment method, its balance is below the
	// threshold, no earlier failure asks it to wait, and no attempt is in
	// flight. An attempt in flight longer than stale with no payment
	// recorded for it is handed out again with the same key, so that a
	// process that died while asking the provider is retried with the
	// provider's idempotency. ErrNotFound when there is nothing to do.
	ClaimAutoTopUp(ctx context.Context, accountID string, now time.Time, stale time.Duration) (AutoTopUpAttempt, error)
	// DueAutoTopUps lists up to limit accounts ClaimAutoTopUp may start
	// an attempt for at now (a sweep that does not wait for a charge).
	DueAutoTopUps(ctx context.Context, now time.Time, stale time.Duration, limit int) ([]string, error)
	// SetAutoTopUpIntent records the provider's payment of the attempt
	// in flight with this key.
	SetAutoTopUpIntent(ctx context.Context, accountID, key, paymentID string) error
	// FinishAutoTopUp ends the attempt in flight with this key: a
	// success resets the failure count; a failure counts one more,
	// delays the next attempt by retryAfter, turns the auto top-up off
	// at AutoTopUpMaxFailures, and queues an AlertAutoTopUpFailed alert
	// to the account's destinations. A key that is not in flight (the
	// attempt's end was recorded already) changes nothing: Finished is
	// false.
	FinishAutoTopUp(ctx context.Context, accountID, key string, ok bool, reason string, now time.Time, retryAfter time.Duration) (AutoTopUpResult, error)
}

// AutoTopUp is an account's automatic top-up.
type AutoTopUp struct {
	AccountID      string
	Enabled        bool
	ThresholdCents int64 // an attempt starts when the balance is below it
	AmountCents    int64 // what one attempt adds
	// CustomerID and PaymentMethodID are the provider's customer and
	// the payment method saved by a payment page; "" until one was.
	CustomerID      string
	PaymentMethodID string
	// Attempts counts the attempts ever started; the next one's key
	// ends in Attempts+1.
	Attempts int64
	// InFlight is the key of the attempt in flight, "" for none.
	InFlight      string
	InFlightSince time.Time
	PaymentID     string // the provider's payment of the attempt in flight
	// Failures counts consecutive failed attempts.
	Failures      int64
	LastError     string
	NextAttemptAt time.Time // zero: at once
	UpdatedAt     time.Time
}

// AutoTopUpAttempt is one attempt to charge the saved payment method.
type AutoTopUpAttempt struct {
	AccountID       string
	Key             string // idempotency key: the account and the attempt's number
	AmountCents     int64
	CustomerID      string
	PaymentMethodID string
}

// AutoTopUpResult is what FinishAutoTopUp did.
type AutoTopUpResult struct {
	Finished bool // the key was in flight and is not any more
	Failures int64
	Disabled bool // this failure turned the auto top-up off
}
