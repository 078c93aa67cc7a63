package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/switchyardhq/switchyard/internal/humantime"
	"net/http"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// rateScope is what an admin rate limit counts per: a client address or
// a token subject.
type rateScope int

const (
	addressLimit rateScope = iota
	tokenLimit
)

// allow counts r against the rate of scope for who (an address or a
// token subject) and answers 429 rate_limit_exceeded with Retry-After
// when the rate refuses it, or the limiter's own error (503 when Redis
// cannot be asked and the limits fail closed). A refusal is recorded as
// any other: for a token, in the audit log; for an address, whose token
// is not looked at yet, in the server log only.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, scope rateScope, who string, p Principal) bool {
	rate, key, what := h.cfg.AddressRate, "admin:addr:"+who, "from this address"
	if scope == tokenLimit {
		// A subject is whatever the token's issuer put in it; its hash
		// keeps the limiter's keys short.
		sum := sha256.Sum256([]byte(who))
		rate, key, what = h.cfg.TokenRate, "admin:sub:"+hex.EncodeToString(sum[:16]), "for this token"
	}
	if h.cfg.Limiter == nil || !rate.Enabled() {
		return true
	}
	res, err := h.cfg.Limiter.Allow(r.Context(), key, rate)
	if err != nil {
		// Logged as a refusal, so that an outage of the limiter under a
		// flood writes a few lines with a count, not one per request.
		h.refused(r, storage.AuditEntry{Subject: p.Subject, Action: "request", Outcome: "service_unavailable",
			Detail: "rate limit not checked: " + err.Error()}, false)
		apierror.Write(w, limits.APIError(err))
		return false
	}
	if res.Allowed {
		return true
	}
	e := storage.AuditEntry{Action: "request", Outcome: "rate_limit_exceeded",
		Detail: fmt.Sprintf("%s %s", r.Method, r.URL.Path)}
	if scope == tokenLimit {
		e.Subject, e.Role = p.Subject, p.Role()
	}
	h.refused(r, e, scope == tokenLimit)
	wait := max(res.RetryAfter, time.Second)
	apierror.Write(w, apierror.RateLimited(fmt.Sprintf(
		"Too many admin API requests %s: at most %d per %s. Please try again in %s.",
		what, rate.Limit, humantime.Duration(rate.Period), humantime.Duration(wait)),
		int((wait+time.Second-1)/time.Second)))
	return false
}
