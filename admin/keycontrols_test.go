package admin

import (
	"strconv"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

func TestKeyControls(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { testKeyControls(t, newFixture(t, s.open)) })
	}
}

func testKeyControls(t *testing.T, f *fixture) {
	f.account("alice", 0)
	f.account("bob", 0)
	expires := time.Now().Add(48 * time.Hour).Unix()
	r := f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"ci","expires_at":`+strconv.FormatInt(expires, 10)+`,
		"models":["svc-3"],"allowed_ips":["203.0.113.0/24"],"spend_limit_cents":100,"spend_period":"day",
		"rate_per_minute":10,"stream_limit":1}`)
	f.want(r, 201, "")
	var created struct {
		ID, Key string
		KeyControlsJSON
	}
	r.json(t, &created)
	owner, err := f.store.LookupKey(t.Context(), f.hasher.Hash(created.Key))
	if err != nil {
		t.Fatal(err)
	}
	c := owner.Controls
	if c.ExpiresAt.Unix() != expires || len(c.Models) != 1 || c.Models[0] != "svc-3" ||
		len(c.CIDRs) != 1 || c.SpendLimitCents != 100 || c.SpendPeriod != storage.SpendPerDay ||
		c.RatePerMinute != 10 || c.StreamLimit != 1 {
		t.Fatalf("stored controls %+v", c)
	}
	if created.ExpiresAt == nil || *created.ExpiresAt != expires || created.SpendLimitCents != 100 {
		t.Fatalf("created %+v", created)
	}

	// Replaced whole: what the body leaves out is no longer controlled.
	r = f.do("PUT", "/admin/accounts/alice/keys/"+created.ID+"/controls", f.alice, `{"models":["a","b"]}`)
	f.want(r, 200, "")
	var got KeyJSON
	r.json(t, &got)
	if got.ExpiresAt != nil || len(got.Models) != 2 || got.SpendLimitCents != 0 || len(got.AllowedIPs) != 0 {
		t.Fatalf("after PUT: %+v", got)
	}

	for _, body := range []string{
		`{"spend_limit_cents":100}`,
		`{"spend_limit_cents":100,"spend_period":"week"}`,
		`{"allowed_ips":["10.0.0.0/40"]}`,
		`{"expires_at":946684800}`,
		`{"expires_at":-1}`,
		`{"expires_at":"tomorrow"}`,
		// Times are Unix seconds: the RFC 3339 the admin API once took,
		// milliseconds and fractions are refused.
		`{"expires_at":"2030-01-31T00:00:00Z"}`,
		`{"expires_at":"1924992000"}`,
		`{"expires_at":1924992000000}`,
		`{"expires_at":1924992000.5}`,
		`{"rate_per_minute":-1}`,
	} {
		f.want(f.do("PUT", "/admin/accounts/alice/keys/"+created.ID+"/controls", f.alice, body), 400, "invalid_key_controls")
		f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, body), 400, "invalid_key_controls")
	}

	// Another account's key, and a revoked one, are unknown.
	_, bobKey, err := policy.IssueKey(t.Context(), f.store, f.hasher, policy.ProfileFor(policy.RevisionB), "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	f.want(f.do("PUT", "/admin/accounts/alice/keys/"+bobKey.ID+"/controls", f.alice, `{}`), 404, "key_not_found")
	f.want(f.do("DELETE", "/admin/accounts/alice/keys/"+created.ID, f.alice, ""), 200, "")
	f.want(f.do("PUT", "/admin/accounts/alice/keys/"+created.ID+"/controls", f.alice, `{}`), 404, "key_not_found")
	f.want(f.do("GET", "/admin/accounts/alice/keys/"+created.ID+"/controls", f.alice, ""), 405, "method_not_allowed")
}

// TestKeyControlArgsExpiry: the CLI's --expires takes what a person
// types and turns it into a time, which the admin API then writes as
// Unix seconds.
func TestKeyControlArgsExpiry(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2030-01-31T00:00:00Z":      time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC),
		"2030-01-31T02:00:00+02:00": time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC),
		"2030-01-31":                time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC),
		"30d":                       now.AddDate(0, 0, 30),
		"12h":                       now.Add(12 * time.Hour),
	} {
		c, err := KeyControlArgs{Expires: in}.Controls(now)
		if err != nil || !c.ExpiresAt.Equal(want) {
			t.Errorf("--expires %s: %v, %v; want %v", in, c.ExpiresAt, err, want)
		}
		if got := KeyControlsOf(c).ExpiresAt; got == nil || *got != want.Unix() {
			t.Errorf("--expires %s as JSON: %v, want %d", in, got, want.Unix())
		}
	}
	for _, in := range []string{"2029-12-31", "tomorrow", "0d", "-1h", "1795780800"} {
		if _, err := (KeyControlArgs{Expires: in}).Controls(now); err == nil {
			t.Errorf("--expires %s: accepted", in)
		}
	}
}
