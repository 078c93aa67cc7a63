package admin

import (
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// KeyControlsJSON are a key's controls as the admin API and the CLI's
// --json spell them. Every field's zero (null, [], 0, "") is "no
// control".
type KeyControlsJSON struct {
	// ExpiresAt is when the key stops working, RFC 3339; null: never.
	ExpiresAt *string `json:"expires_at"`
	// Models the key may call; empty: any.
	Models []string `json:"models"`
	// AllowedIPs are the client addresses and ranges (CIDR) the key may
	// be used from; empty: any.
	AllowedIPs []string `json:"allowed_ips"`
	// SpendLimitCents is the most the key may be charged per
	// SpendPeriod; 0: no limit.
	SpendLimitCents int64 `json:"spend_limit_cents"`
	// SpendPeriod is "day" or "month" (UTC), with a spend limit.
	SpendPeriod string `json:"spend_period"`
	// RatePerMinute caps the key's requests per minute below the
	// profile's; 0: the profile's.
	RatePerMinute int `json:"rate_per_minute"`
	// StreamLimit caps the key's concurrent streams below the profile's;
	// 0: the profile's.
	StreamLimit int `json:"stream_limit"`
}

// KeyControlsOf is c as JSON.
func KeyControlsOf(c storage.KeyControls) KeyControlsJSON {
	out := KeyControlsJSON{
		Models: nonNil(c.Models), AllowedIPs: nonNil(c.CIDRs), SpendLimitCents: c.SpendLimitCents,
		SpendPeriod: string(c.SpendPeriod), RatePerMinute: c.RatePerMinute, StreamLimit: c.StreamLimit,
	}
	if !c.ExpiresAt.IsZero() {
		t := timeJSON(c.ExpiresAt)
		out.ExpiresAt = &t
	}
	return out
}

// Controls reads j, refusing with 400 invalid_key_controls what
// policy.ValidKeyControls refuses at now, or an expiry that is not RFC
// 3339.
func (j KeyControlsJSON) Controls(now time.Time) (storage.KeyControls, error) {
	c := storage.KeyControls{
		Models: j.Models, CIDRs: j.AllowedIPs, SpendLimitCents: j.SpendLimitCents,
		SpendPeriod: storage.SpendPeriod(j.SpendPeriod), RatePerMinute: j.RatePerMinute, StreamLimit: j.StreamLimit,
	}
	if len(c.Models) == 0 {
		c.Models = nil
	}
	if len(c.CIDRs) == 0 {
		c.CIDRs = nil
	}
	if j.ExpiresAt != nil && *j.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, *j.ExpiresAt)
		if err != nil {
			return c, apierror.InvalidRequest("invalid_key_controls",
				"expires_at is a time such as 2030-01-31T00:00:00Z.")
		}
		c.ExpiresAt = t
	}
	return c, policy.ValidKeyControls(c, now)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// setKeyControls: PUT .../keys/{id}/controls, the key's controls
// replaced whole by the body's.
func (q *request) setKeyControls(a storage.Account, id string) {
	var body KeyControlsJSON
	err := q.decode(&body)
	var k storage.APIKey
	if err == nil {
		var c storage.KeyControls
		if c, err = body.Controls(time.Now()); err == nil {
			k, err = policy.SetKeyControls(q.ctx, q.h.cfg.Store, a.ID, id, c, time.Now())
		}
	}
	q.audit("key.controls", a.Name, clipNote(id), outcome(err), "")
	if err != nil {
		q.fail(err)
		return
	}
	q.reply(http.StatusOK, keyOut(k))
}
