package policy

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

// Bounds of what a key's controls may list, so that a key's row and the
// checks made on every request stay small.
const (
	maxKeyModels = 64
	maxKeyCIDRs  = 64
)

// CheckKeyUse refuses a request of p that its key's controls do not allow
// at now from the client address clientIP (an address, with or without a
// port): 401 key_expired past the key's expiry, 403 address_not_allowed
// from an address outside its allow-list. It runs right after
// authentication, before anything of the request is counted.
func CheckKeyUse(p Principal, clientIP string, now time.Time) error {
	c := p.Controls
	if !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt) {
		return apierror.New(http.StatusUnauthorized, apierror.TypeInvalidRequest, "key_expired",
			fmt.Sprintf("API key %s expired at %s.", p.KeyHint, c.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	if len(c.CIDRs) == 0 {
		return nil
	}
	if addr, ok := parseClientIP(clientIP); ok {
		for _, s := range c.CIDRs {
			if prefix, err := parsePrefix(s); err == nil && prefix.Contains(addr) {
				return nil
			}
		}
	}
	return apierror.New(http.StatusForbidden, apierror.TypePermission, "address_not_allowed",
		fmt.Sprintf("API key %s may not be used from this address.", p.KeyHint))
}

// CheckModel refuses, with 403 model_not_allowed, a request of p for a
// model its key's allow-list does not name. Names compare exactly, as
// the backends and the price table spell them.
func CheckModel(p Principal, model string) error {
	models := p.Controls.Models
	if len(models) == 0 || slices.Contains(models, model) {
		return nil
	}
	return apierror.New(http.StatusForbidden, apierror.TypePermission, "model_not_allowed",
		fmt.Sprintf("API key %s may not use model %q; it may use: %s.", p.KeyHint, model, strings.Join(models, ", ")))
}

// ValidKeyControls refuses, with 400 invalid_key_controls, controls that
// no request could be checked against: an unparsable address prefix, a
// spend limit without a period (or a period that is not day or month), a
// negative number, too long a list. now is for the expiry, which must
// lie ahead.
func ValidKeyControls(c storage.KeyControls, now time.Time) error {
	bad := func(msg string) error { return apierror.InvalidRequest("invalid_key_controls", msg) }
	switch {
	case !c.ExpiresAt.IsZero() && !c.ExpiresAt.After(now):
		return bad("A key's expiry must lie in the future.")
	case len(c.Models) > maxKeyModels:
		return bad(fmt.Sprintf("A key may list at most %d models.", maxKeyModels))
	case len(c.CIDRs) > maxKeyCIDRs:
		return bad(fmt.Sprintf("A key may list at most %d address ranges.", maxKeyCIDRs))
	case c.SpendLimitCents < 0 || c.RatePerMinute < 0 || c.StreamLimit < 0:
		return bad("A key's limits are zero (none) or positive.")
	case c.SpendLimitCents > 0 && c.SpendPeriod != storage.SpendPerDay && c.SpendPeriod != storage.SpendPerMonth:
		return bad(`A spend limit needs a period: "day" or "month".`)
	case c.SpendLimitCents == 0 && c.SpendPeriod != "":
		return bad("A spend period needs a spend limit.")
	}
	for _, m := range c.Models {
		if m == "" || len(m) > 256 || strings.ContainsAny(m, " \t\r\n") {
			return bad(fmt.Sprintf("%q is not a model name.", m))
		}
	}
	for _, s := range c.CIDRs {
		if _, err := parsePrefix(s); err != nil {
			return bad(fmt.Sprintf("%q is not an address or an address range such as 203.0.113.0/24.", s))
		}
	}
	return nil
}

// parsePrefix reads an address range, or a bare address as a range of one.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}

// parseClientIP reads an address, with or without a port, IPv4-mapped
// IPv6 addresses as IPv4.
func parseClientIP(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
