package admin

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// KeyControlsJSON are a key's controls as the admin API and the CLI's
// --json spell them. Every field's zero (null, [], 0, "") is "no
// control".
type KeyControlsJSON struct {
	// ExpiresAt is when the key stops working, in Unix seconds; null:
	// never.
	ExpiresAt *int64 `json:"expires_at"`
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
	out.ExpiresAt = UnixTimeOrNull(c.ExpiresAt)
	return out
}

// Controls reads j, refusing with 400 invalid_key_controls what
// policy.ValidKeyControls refuses at now, or an expiry beyond year 9999
// (milliseconds sent for seconds).
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
	if j.ExpiresAt != nil {
		if *j.ExpiresAt > maxUnixSeconds {
			return c, apierror.InvalidRequest("invalid_key_controls", timeMessage("expires_at"))
		}
		// A negative or past time is an expiry in the past, which
		// policy.ValidKeyControls refuses.
		c.ExpiresAt = time.Unix(*j.ExpiresAt, 0).UTC()
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
	q.reply(http.StatusOK, KeyOf(k))
}

// KeyControlArgs are key controls as the CLI's flags spell them.
type KeyControlArgs struct {
	// Expires is what a person types: an RFC 3339 time, a day
	// (YYYY-MM-DD, its midnight UTC), or a time from now such as 720h or
	// 30d; "": never.
	Expires string
	// Models and AllowedIPs are the allow-lists; each element may hold
	// several, comma-separated.
	Models, AllowedIPs []string
	// SpendLimitUSD is dollars, such as 1 or 12.50; "": no limit.
	SpendLimitUSD string
	// SpendPeriod is "day" or "month".
	SpendPeriod                string
	RatePerMinute, StreamLimit int
}

// Controls reads a at now, refusing with 400 invalid_key_controls what
// cannot be read or what policy.ValidKeyControls refuses.
func (a KeyControlArgs) Controls(now time.Time) (storage.KeyControls, error) {
	bad := func(msg string) error { return apierror.InvalidRequest("invalid_key_controls", msg) }
	c := storage.KeyControls{
		Models: splitList(a.Models), CIDRs: splitList(a.AllowedIPs),
		SpendPeriod: storage.SpendPeriod(a.SpendPeriod), RatePerMinute: a.RatePerMinute, StreamLimit: a.StreamLimit,
	}
	if a.Expires != "" {
		t, err := parseExpiry(a.Expires, now)
		if err != nil {
			return c, bad("An expiry is a time such as 2030-01-31T00:00:00Z, a day such as 2030-01-31 (from 00:00 UTC), or a time from now such as 30d or 12h.")
		}
		c.ExpiresAt = t
	}
	if a.SpendLimitUSD != "" {
		cents, err := billing.ParseUSD(a.SpendLimitUSD)
		if err != nil || cents == 0 {
			return c, bad("A spend limit is a positive dollar amount such as 1 or 12.50.")
		}
		c.SpendLimitCents = cents
	}
	return c, policy.ValidKeyControls(c, now)
}

func parseExpiry(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return time.Time{}, errors.New("bad days")
		}
		return now.AddDate(0, 0, n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, errors.New("bad duration")
	}
	return now.Add(d), nil
}

// splitList splits comma-separated elements, dropping empty ones; nil
// for none.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}
