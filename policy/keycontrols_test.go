package policy

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/storage"
)

func wantRefusal(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	ae, ok := errors.AsType[*apierror.Error](err)
	if code == "" {
		if err != nil {
			t.Errorf("%s: refused with %v, want allowed", what, err)
		}
		return
	}
	if !ok || ae.Status != status || ae.Code != code {
		t.Errorf("%s: %v, want %d %s", what, err, status, code)
	}
}

func TestCheckKeyUse(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	p := Principal{KeyHint: "sk-...abcd", Controls: storage.KeyControls{
		ExpiresAt: now.Add(time.Hour),
		CIDRs:     []string{"203.0.113.0/24", "2001:db8::/32", "198.51.100.7"},
	}}
	for _, tc := range []struct {
		name, ip string
		at       time.Time
		status   int
		code     string
	}{
		{"inside an IPv4 range", "203.0.113.9", now, 0, ""},
		{"with a port", "203.0.113.9:5123", now, 0, ""},
		{"IPv4-mapped IPv6", "::ffff:203.0.113.9", now, 0, ""},
		{"a bare address listed", "198.51.100.7", now, 0, ""},
		{"inside an IPv6 range", "[2001:db8::1]:443", now, 0, ""},
		{"outside", "192.0.2.1", now, http.StatusForbidden, "address_not_allowed"},
		{"next to a bare address", "198.51.100.8", now, http.StatusForbidden, "address_not_allowed"},
		{"not an address", "example.com", now, http.StatusForbidden, "address_not_allowed"},
		{"expired", "203.0.113.9", now.Add(time.Hour), http.StatusUnauthorized, "key_expired"},
		{"expired, and from outside", "192.0.2.1", now.Add(2 * time.Hour), http.StatusUnauthorized, "key_expired"},
	} {
		wantRefusal(t, tc.name, CheckKeyUse(p, tc.ip, tc.at), tc.status, tc.code)
	}
	wantRefusal(t, "no controls", CheckKeyUse(Principal{}, "", now), 0, "")
}

func TestCheckModel(t *testing.T) {
	p := Principal{Controls: storage.KeyControls{Models: []string{"svc-3", "gpt-4o-mini"}}}
	wantRefusal(t, "listed", CheckModel(p, "svc-3"), 0, "")
	wantRefusal(t, "not listed", CheckModel(p, "gpt-4o"), http.StatusForbidden, "model_not_allowed")
	wantRefusal(t, "case differs", CheckModel(p, "SVC-3"), http.StatusForbidden, "model_not_allowed")
	wantRefusal(t, "no list", CheckModel(Principal{}, "anything"), 0, "")
}

func TestValidKeyControls(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		c    storage.KeyControls
		ok   bool
	}{
		{"zero", storage.KeyControls{}, true},
		{"all", storage.KeyControls{ExpiresAt: now.Add(time.Hour), Models: []string{"m"}, CIDRs: []string{"10.0.0.0/8", "::1"},
			SpendLimitCents: 100, SpendPeriod: storage.SpendPerMonth, RatePerMinute: 5, StreamLimit: 1}, true},
		{"past expiry", storage.KeyControls{ExpiresAt: now}, false},
		{"bad range", storage.KeyControls{CIDRs: []string{"10.0.0.0/33"}}, false},
		{"limit without period", storage.KeyControls{SpendLimitCents: 100}, false},
		{"period without limit", storage.KeyControls{SpendPeriod: storage.SpendPerDay}, false},
		{"weekly", storage.KeyControls{SpendLimitCents: 100, SpendPeriod: "week"}, false},
		{"negative rate", storage.KeyControls{RatePerMinute: -1}, false},
		{"model with a space", storage.KeyControls{Models: []string{"a b"}}, false},
	} {
		err := ValidKeyControls(tc.c, now)
		if tc.ok {
			wantRefusal(t, tc.name, err, 0, "")
		} else {
			wantRefusal(t, tc.name, err, http.StatusBadRequest, "invalid_key_controls")
		}
	}
}

// TestKeyCacheRereadsSpendLimitedKeys: a key with a spend limit is served
// from the cache only while nothing was committed and its period has not
// ended; otherwise it is looked up again, since the balance read does not
// carry its spend.
func TestKeyCacheRereadsSpendLimitedKeys(t *testing.T) {
	now := time.Date(2030, 5, 1, 23, 0, 0, 0, time.UTC)
	cache := NewKeyCache(100, func() time.Time { return now })
	a, keys, key := newTestAuth(t, cache)
	keys.tracked = true
	h := a.hasher.Hash(key)
	setSpend := func(cents int64, period string) {
		keys.mu.Lock()
		o := keys.owners[h]
		o.Controls = storage.KeyControls{SpendLimitCents: 100, SpendPeriod: storage.SpendPerDay}
		o.PeriodSpendCents, o.Period = cents, period
		keys.owners[h] = o
		keys.commits++
		keys.mu.Unlock()
	}
	spend := func() int64 {
		t.Helper()
		p, err := a.Authenticate(context.Background(), "Bearer "+key)
		if err != nil {
			t.Fatal(err)
		}
		return p.PeriodSpendCents
	}
	setSpend(10, storage.SpendPerDay.Name(now))
	for range 3 {
		if got := spend(); got != 10 {
			t.Fatalf("spend %d, want 10", got)
		}
	}
	if keys.lookups != 1 {
		t.Fatalf("%d lookups while nothing was committed, want 1", keys.lookups)
	}
	setSpend(40, storage.SpendPerDay.Name(now))
	if got := spend(); got != 40 || keys.lookups != 2 || keys.balanceReads != 0 {
		t.Fatalf("after a charge: spend %d, %d lookups, %d balance reads; want 40, 2, 0", got, keys.lookups, keys.balanceReads)
	}
	// Midnight, nothing committed: the cached spend is of yesterday.
	now = now.Add(2 * time.Hour)
	keys.mu.Lock()
	o := keys.owners[h]
	o.PeriodSpendCents, o.Period = 0, storage.SpendPerDay.Name(now)
	keys.owners[h] = o
	keys.mu.Unlock()
	if got := spend(); got != 0 || keys.lookups != 3 {
		t.Fatalf("in the next period: spend %d after %d lookups; want 0 after 3", got, keys.lookups)
	}
}
