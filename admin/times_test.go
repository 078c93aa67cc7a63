package admin

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// TestTimesAreUnixSeconds: every time the admin API writes is a JSON
// integer of Unix seconds (or null), on every list and object that
// carries one, and every time it takes is one too.
func TestTimesAreUnixSeconds(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { testTimesAreUnixSeconds(t, newFixture(t, s.open)) })
	}
}

// timeBounds are the times this test's objects can hold: the real clock
// (creations) and the fixture's t0 (the request log). A value outside is
// milliseconds, nanoseconds or garbage.
var timeBounds = [2]int64{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()}

// unixTimes checks every member of body named *_at, at any depth: an
// integer within timeBounds, or null. It returns the integers by member
// name.
func unixTimes(t *testing.T, where, body string) map[string][]int64 {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, body)
	}
	found := map[string][]int64{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for name, m := range v {
				if !strings.HasSuffix(name, "_at") {
					walk(m)
					continue
				}
				if m == nil {
					continue
				}
				n, ok := m.(json.Number)
				i, err := n.Int64()
				if !ok || err != nil || i < timeBounds[0] || i > timeBounds[1] {
					t.Errorf("%s: %s is %#v, want Unix seconds\n%s", where, name, m, body)
					continue
				}
				found[name] = append(found[name], i)
			}
		}
	}
	walk(v)
	return found
}

func testTimesAreUnixSeconds(t *testing.T, f *fixture) {
	ctx := t.Context()
	alice := f.account("alice", 0)
	gone := f.account("gone", 0)

	// A key with an expiry, a revoked one that was used, a ledger, a
	// receipt, an alert that fired and its deliveries, a file, the
	// request log, the audit log and a disabled account.
	expires := time.Now().Add(72 * time.Hour).Unix()
	r := f.do("POST", "/admin/accounts/alice/keys", f.alice, fmt.Sprintf(`{"label":"ci","expires_at":%d}`, expires))
	f.want(r, 201, "")
	if got := unixTimes(t, "created key", r.body); len(got["created_at"]) != 1 || len(got["expires_at"]) != 1 || got["expires_at"][0] != expires {
		t.Errorf("created key: times %v, want created_at and expires_at %d\n%s", got, expires, r.body)
	}
	var used struct{ ID string }
	r = f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"used"}`)
	f.want(r, 201, "")
	r.json(t, &used)
	if _, err := f.store.SettleUsage(ctx, storage.UsageRecord{AccountID: alice.ID, KeyID: used.ID, RequestID: "used-1", Model: "m",
		PromptTokens: 1, Outcome: storage.OutcomeCompleted, Started: t0, Finished: t0, CostCents: 1}); err != nil {
		t.Fatal(err)
	}
	r = f.do("DELETE", "/admin/accounts/alice/keys/"+used.ID, f.alice, "")
	f.want(r, 200, "")
	if got := unixTimes(t, "revoked key", r.body); len(got["revoked_at"]) != 1 || len(got["last_used_at"]) != 1 {
		t.Errorf("revoked key: times %v, want revoked_at and last_used_at\n%s", got, r.body)
	}

	if _, err := f.store.SetAlertSettings(ctx, storage.AlertSettings{AccountID: alice.ID, BelowCents: ptr(int64(1000)),
		WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []storage.Entry{
		{AccountID: alice.ID, AmountCents: 2000, Kind: storage.EntryTopUp, Reference: storage.PaymentReferencePrefix + "generic:p1"},
		{AccountID: alice.ID, AmountCents: -1500, Kind: storage.EntryCharge, Reference: "charge-1"},
	} {
		if _, err := f.store.Post(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.files.StoreGenerated(ctx, alice.ID, "notes.txt", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	var log []storage.RequestLogEntry
	for i := range 5 {
		log = append(log, storage.RequestLogEntry{AccountID: alice.ID, At: t0.Add(time.Duration(i-5) * time.Minute),
			RequestID: fmt.Sprintf("r%d", i), Route: "v1", Method: "POST", Path: "/v1/chat/completions", Status: 200})
	}
	if err := f.store.AppendRequestLog(ctx, log); err != nil {
		t.Fatal(err)
	}
	f.want(f.do("POST", "/admin/accounts/gone/disable", f.operator, ""), 200, "")
	gone, err := f.store.AccountByName(ctx, gone.Name)
	if err != nil {
		t.Fatal(err)
	}

	// Each answer, and the time members it must hold as integers.
	for _, c := range []struct {
		path, token string
		want        []string
	}{
		{"/admin/accounts", f.operator, []string{"created_at", "disabled_at"}},
		{"/admin/accounts/gone", f.operator, []string{"created_at", "disabled_at"}},
		{"/admin/accounts/alice/keys", f.alice, []string{"created_at", "expires_at", "revoked_at", "last_used_at"}},
		{"/admin/accounts/alice/ledger", f.alice, []string{"created_at"}},
		{"/admin/accounts/alice/receipts", f.alice, []string{"created_at"}},
		{"/admin/accounts/alice/alerts", f.alice, []string{"fired_at"}},
		{"/admin/accounts/alice/alerts/deliveries", f.alice, []string{"created_at", "next_attempt_at"}},
		{"/admin/accounts/alice/files", f.alice, []string{"created_at"}},
		{"/admin/accounts/alice/activity", f.alice, []string{"created_at"}},
		{"/admin/audit", f.operator, []string{"created_at"}},
	} {
		r := f.do("GET", c.path, c.token, "")
		f.want(r, 200, "")
		got := unixTimes(t, c.path, r.body)
		for _, name := range c.want {
			if len(got[name]) == 0 {
				t.Errorf("%s: no %s as Unix seconds\n%s", c.path, name, r.body)
			}
		}
	}

	// The values are the stored times, to the second.
	var acct struct {
		CreatedAt  int64 `json:"created_at"`
		DisabledAt int64 `json:"disabled_at"`
	}
	f.do("GET", "/admin/accounts/gone", f.operator, "").json(t, &acct)
	if acct.CreatedAt != gone.CreatedAt.Unix() || acct.DisabledAt != gone.DisabledAt.Unix() {
		t.Errorf("account times %+v, want %d and %d", acct, gone.CreatedAt.Unix(), gone.DisabledAt.Unix())
	}
	var act page[struct {
		RequestID string `json:"request_id"`
		CreatedAt int64  `json:"created_at"`
	}]
	f.do("GET", "/admin/accounts/alice/activity", f.alice, "").json(t, &act)
	if len(act.Data) != 5 || act.Data[0].RequestID != "r4" || act.Data[0].CreatedAt != t0.Add(-time.Minute).Unix() {
		t.Errorf("activity = %+v, want r4 first at %d", act.Data, t0.Add(-time.Minute).Unix())
	}

	// since and until take Unix seconds and select [since, until).
	q := url.Values{"since": {strconv.FormatInt(t0.Add(-3*time.Minute).Unix(), 10)}, "until": {strconv.FormatInt(t0.Add(-time.Minute).Unix(), 10)}}
	f.do("GET", "/admin/accounts/alice/activity?"+q.Encode(), f.alice, "").json(t, &act)
	if len(act.Data) != 2 || act.Data[0].RequestID != "r3" || act.Data[1].RequestID != "r2" {
		t.Errorf("activity from t0-3m until t0-1m = %+v, want r3 and r2", act.Data)
	}

	// Any other text is refused with the envelope, naming the parameter
	// and showing an integer.
	for _, p := range []string{"since", "until"} {
		for _, v := range []string{"2031-05-06T07:08:09Z", "2031-05-06", "1.5", "-1", "+1950000000", "1950000000000", "0x10", " 1950000000", "May"} {
			r := f.do("GET", "/admin/accounts/alice/activity?"+p+"="+url.QueryEscape(v), f.alice, "")
			f.want(r, 400, "invalid_date")
			var env struct {
				Error struct{ Message, Type string }
			}
			r.json(t, &env)
			if !strings.HasPrefix(env.Error.Message, p+" is a time in Unix seconds, such as 1767225600") || env.Error.Type != "invalid_request_error" {
				t.Errorf("%s=%s: %s", p, v, r.body)
			}
		}
	}
	f.want(f.do("GET", "/admin/accounts/alice/activity?since=1950000000&until=1950000000", f.alice, ""), 400, "invalid_date")

	// A key's expiry given as RFC 3339 says what to send instead, and
	// creates nothing.
	before, err := f.store.ListKeys(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	r = f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"late","expires_at":"2030-01-31T00:00:00Z"}`)
	f.want(r, 400, "invalid_key_controls")
	if !strings.Contains(r.body, "expires_at is a time in Unix seconds, such as 1767225600") {
		t.Errorf("RFC 3339 expiry: %s", r.body)
	}
	if after, _ := f.store.ListKeys(ctx, alice.ID); len(after) != len(before) {
		t.Errorf("a refused key was created: %d keys, then %d", len(before), len(after))
	}

	// The exports: JSON Lines with the integers, CSV with them and a
	// column of the same instant for people.
	export := func(format string) string {
		req := httptest.NewRequest("GET", "/admin/accounts/alice/activity?format="+format, nil)
		req.RemoteAddr = "198.51.100.7:5555"
		req.Header.Set("Authorization", "Bearer "+f.alice)
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("format=%s: %d %s", format, w.Code, w.Body)
		}
		return w.Body.String()
	}
	lines := strings.Split(strings.TrimSpace(export("jsonl")), "\n")
	if len(lines) != 5 {
		t.Fatalf("jsonl: %d lines", len(lines))
	}
	if got := unixTimes(t, "jsonl", lines[0]); len(got["created_at"]) != 1 || got["created_at"][0] != t0.Add(-time.Minute).Unix() {
		t.Errorf("jsonl first line %s, want created_at %d", lines[0], t0.Add(-time.Minute).Unix())
	}
	rows, err := csv.NewReader(bytes.NewReader([]byte(export("csv")))).ReadAll()
	if err != nil || len(rows) != 6 {
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
	head, first := rows[0], rows[1]
	col := func(name string) string {
		for i, h := range head {
			if h == name {
				return first[i]
			}
		}
		t.Fatalf("csv header %v lacks %s", head, name)
		return ""
	}
	if col("created_at") != strconv.FormatInt(t0.Add(-time.Minute).Unix(), 10) || col("created_at_utc") != "2031-05-06 07:07:09" ||
		head[len(head)-1] != "created_at_utc" {
		t.Errorf("csv header %v, first row %v: want created_at %d and created_at_utc 2031-05-06 07:07:09 last",
			head, first, t0.Add(-time.Minute).Unix())
	}
}
