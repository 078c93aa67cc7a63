package storage

import (
	"context"
	"time"
)

// KeyControls are the limits a key carries beside its account's. The
// zero value controls nothing: the key may call any model from any
// address, for ever, up to its account's profile and balance.
type KeyControls struct {
	// ExpiresAt is when the key stops working; zero: never.
	ExpiresAt time.Time
	// Models the key may call; empty: any.
	Models []string
	// CIDRs are the client addresses the key may be used from, as
	// prefixes ("203.0.113.0/24", "2001:db8::/32", a bare address);
	// empty: any.
	CIDRs []string
	// SpendLimitCents is the most the key may be charged per
	// SpendPeriod; 0: no limit but the account's balance.
	SpendLimitCents int64
	// SpendPeriod is the calendar period (UTC) the limit counts over.
	SpendPeriod SpendPeriod
	// RatePerMinute caps the key's request rate below the profile's; 0:
	// the profile's.
	RatePerMinute int
	// StreamLimit caps the key's concurrent streams below the profile's;
	// 0: the profile's.
	StreamLimit int
}

// SpendPeriod is the calendar period a key's spend limit counts over.
type SpendPeriod string

const (
	SpendPerDay   SpendPeriod = "day"
	SpendPerMonth SpendPeriod = "month"
)

// Start is the beginning (UTC) of the period that holds t.
func (p SpendPeriod) Start(t time.Time) time.Time {
	t = t.UTC()
	if p == SpendPerMonth {
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Name names the period that holds t, distinct for every period of
// either kind ("d2026-11-27", "m2026-11").
func (p SpendPeriod) Name(t time.Time) string {
	if p == SpendPerMonth {
		return "m" + t.UTC().Format("2006-01")
	}
	return "d" + t.UTC().Format("2006-01-02")
}

// KeyControlStore changes a key's controls.
type KeyControlStore interface {
	// SetKeyControls replaces the controls of an active key and returns
	// it. It raises the key generation in the same transaction, as a
	// revocation does, so that no node keeps using the old controls.
	// ErrNotFound for an unknown or revoked key.
	SetKeyControls(ctx context.Context, keyID string, c KeyControls) (APIKey, error)
}
