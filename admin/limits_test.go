package admin

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
)

// lockedBuffer is a log sink tests read while the handler writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) Sync() error { return nil }
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// limitedFixture is a fixture whose handler has rate limits, a clock the
// test moves, and a log the test reads.
func limitedFixture(t *testing.T, open func(t *testing.T) storage.Store, tokenRate, addressRate limits.Rate) (*fixture, *fakeclock.Clock, *lockedBuffer) {
	t.Helper()
	f := newFixture(t, open)
	clock := fakeclock.New(t0)
	logs := new(lockedBuffer)
	v, err := NewVerifier(VerifierConfig{Secret: testSecret, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{
		Store: f.store, Hasher: f.hasher, Profile: policy.ProfileFor(policy.RevisionB), Verifier: v,
		Logger:  zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zap.InfoLevel)),
		Now:     clock.Now,
		Limiter: limits.NewLocal(limits.LocalConfig{Now: clock.Now}), TokenRate: tokenRate, AddressRate: addressRate,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	f.h = h
	return f, clock, logs
}

func TestAdminRateLimits(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Run("PerToken", func(t *testing.T) { testTokenRateLimit(t, s.open) })
			t.Run("PerAddress", func(t *testing.T) { testAddressRateLimit(t, s.open) })
		})
	}
}

func testTokenRateLimit(t *testing.T, open func(t *testing.T) storage.Store) {
	f, clock, _ := limitedFixture(t, open, limits.Rate{Limit: 3, Period: time.Minute}, limits.Rate{})
	f.account("alice", 0)
	for range 3 {
		f.want(f.do("GET", "/admin/accounts/alice", f.alice, ""), 200, "")
	}
	r := f.do("GET", "/admin/accounts/alice", f.alice, "")
	f.want(r, 429, "rate_limit_exceeded")
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || retry < 1 || retry > 60 {
		t.Errorf("Retry-After %q, want 1 to 60 seconds", r.header.Get("Retry-After"))
	}
	var env struct {
		Error struct{ Message, Type string }
	}
	r.json(t, &env)
	if env.Error.Type != "requests" || !strings.Contains(env.Error.Message, "at most 3 per 1 minute") {
		t.Errorf("429 envelope %+v", env.Error)
	}
	// Another token of the same subject shares the budget; another
	// subject has its own.
	again := hs256(t, testSecret, claims(map[string]any{"sub": "alice-owner", "iat": t0.Add(time.Second).Unix()}))
	f.want(f.do("GET", "/admin/me", again, ""), 429, "rate_limit_exceeded")
	f.want(f.do("GET", "/admin/me", f.operator, ""), 200, "")
	// Refused before anything is done: no top-up, no key.
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"x"}`), 429, "rate_limit_exceeded")
	if keys, _ := f.store.ListKeys(t.Context(), f.account("alice", 0).ID); len(keys) != 0 {
		t.Errorf("a rate-limited request created %+v", keys)
	}
	es := f.audit("")
	if len(es) == 0 || es[0].Action != "request" || es[0].Outcome != "rate_limit_exceeded" || es[0].Subject != "alice-owner" ||
		es[0].Detail != "POST /admin/accounts/alice/keys" {
		t.Errorf("rate-limited requests audited as %+v", es)
	}
	clock.Advance(time.Minute)
	f.want(f.do("GET", "/admin/accounts/alice", f.alice, ""), 200, "")
}

func testAddressRateLimit(t *testing.T, open func(t *testing.T) storage.Store) {
	f, _, logs := limitedFixture(t, open, limits.Rate{}, limits.Rate{Limit: 4, Period: time.Minute})
	before := len(f.audit(""))
	// Counted before the token is looked at: forged and missing tokens
	// use up the address's budget as genuine ones do.
	f.want(f.do("GET", "/admin/me", "", ""), 401, "invalid_token")
	f.want(f.do("GET", "/admin/me", "not.a.token", ""), 401, "invalid_token")
	f.want(f.do("GET", "/admin/me", f.alice, ""), 200, "")
	f.want(f.do("GET", "/admin/me", f.operator, ""), 200, "")
	for _, token := range []string{f.operator, "", "forged"} {
		r := f.do("GET", "/admin/me", token, "")
		f.want(r, 429, "rate_limit_exceeded")
		if r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "from this address") {
			t.Errorf("address 429: %v %s", r.header, r.body)
		}
	}
	// The address's refusals are logged, not stored: no genuine token
	// stands behind them.
	if got := len(f.audit("")); got != before {
		t.Errorf("%d audit entries for refusals of an address, want none", got-before)
	}
	if !strings.Contains(logs.String(), `"outcome":"rate_limit_exceeded"`) || !strings.Contains(logs.String(), `"remote_ip":"198.51.100.7"`) {
		t.Errorf("the address's refusals are not in the log:\n%s", logs.String())
	}
}

func TestRefusalFloods(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { testRefusalFloods(t, s.open) })
	}
}

func testRefusalFloods(t *testing.T, open func(t *testing.T) storage.Store) {
	f, clock, logs := limitedFixture(t, open, limits.Rate{}, limits.Rate{})
	f.account("alice", 0)
	long := strings.Repeat("b", 5000)
	for i := range 25 {
		f.want(f.do("GET", "/admin/accounts/"+long+strconv.Itoa(i), f.alice, ""), 404, "account_not_found")
	}
	f.want(f.do("GET", "/admin/audit", f.alice, ""), 403, "permission_denied")
	f.want(f.do("GET", "/admin/accounts/alice", f.bobCarol, ""), 404, "account_not_found")
	entries := f.audit("")
	var alike, other int
	for _, e := range entries {
		switch {
		case e.Subject == "alice-owner" && e.Outcome == "account_not_found":
			alike++
			if !strings.HasPrefix(e.Account, "bbbb") || len([]rune(e.Account)) > maxAuditValue+1 || !strings.HasSuffix(e.Account, "…") {
				t.Errorf("account of a refusal stored as %d runes %.20q…", len([]rune(e.Account)), e.Account)
			}
		default:
			other++
		}
	}
	if alike != refusalsWritten || other != 2 {
		t.Fatalf("audit log holds %d of alice's alike refusals and %d others, want %d and 2", alike, other, refusalsWritten)
	}

	// Within the interval, nothing more; once it is over, one summary.
	f.h.refusals.flush(clock.Now(), false)
	if got := len(f.audit("")); got != len(entries) {
		t.Errorf("a summary was written within the interval: %d entries, want %d", got, len(entries))
	}
	clock.Advance(DefaultRefusalInterval)
	f.h.refusals.flush(clock.Now(), false)
	after := f.audit("")
	if len(after) != len(entries)+1 {
		t.Fatalf("after the interval: %d entries, want %d and a summary", len(after), len(entries))
	}
	s := after[0]
	if s.Subject != "alice-owner" || s.Outcome != "account_not_found" || !strings.HasPrefix(s.Detail, "15 more like this from 2031-05-06T07:08:09Z to 2031-05-06T07:09:09Z") {
		t.Errorf("summary %+v", s)
	}
	if !strings.Contains(logs.String(), `15 more like this`) {
		t.Error("the summary is not in the server log")
	}
	// A new interval writes again.
	f.want(f.do("GET", "/admin/accounts/"+long, f.alice, ""), 404, "account_not_found")
	if got := len(f.audit("")); got != len(after)+1 {
		t.Errorf("a refusal in a new interval: %d entries, want %d", got, len(after)+1)
	}

	// Forged tokens are only logged, and a flood of them aggregated too.
	logged := strings.Count(logs.String(), `"msg":"admin request refused"`)
	for range 30 {
		f.want(f.do("GET", "/admin/me", "forged."+long+".token", ""), 401, "invalid_token")
	}
	if got := strings.Count(logs.String(), `"msg":"admin request refused"`) - logged; got != refusalsWritten {
		t.Errorf("30 forged tokens wrote %d log lines, want %d", got, refusalsWritten)
	}
	f.h.Close()
	if !strings.Contains(logs.String(), `20 more like this`) {
		t.Errorf("Close did not write the forged tokens' summary:\n%.2000s", logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 4000 {
			t.Errorf("a log line of %d bytes: %.200s…", len(line), line)
		}
	}
}

// downLimiter is a limiter whose Redis does not answer, under
// fail_closed.
type downLimiter struct{}

func (downLimiter) Allow(context.Context, string, limits.Rate) (limits.RateResult, error) {
	return limits.RateResult{}, &limits.UnavailableError{Limit: limits.LimitRequests, Err: errors.New("dial tcp: connection refused")}
}

// TestAdminRateLimitUnavailable: when the limiter cannot say, the admin
// API answers 503 in the envelope and does nothing, as the limits'
// fail_closed policy asks; the refusals are logged, a flood of them
// counted.
func TestAdminRateLimitUnavailable(t *testing.T) {
	f, _, logs := limitedFixture(t, stores[0].open, limits.Rate{Limit: 5, Period: time.Minute}, limits.Rate{Limit: 5, Period: time.Minute})
	f.h.cfg.Limiter = downLimiter{}
	for range 15 {
		r := f.do("GET", "/admin/me", f.alice, "")
		f.want(r, 503, "service_unavailable")
		if strings.Contains(r.body, "dial tcp") {
			t.Fatalf("the limiter's error reached the client: %s", r.body)
		}
	}
	if got := strings.Count(logs.String(), `"outcome":"service_unavailable"`); got != refusalsWritten {
		t.Errorf("15 requests the limiter could not check wrote %d log lines, want %d", got, refusalsWritten)
	}
}
