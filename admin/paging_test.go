package admin

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// pageJSON is a page as a client reads it: cursors as raw ids, whatever
// the items.
type pageJSON struct {
	Object *string `json:"object"`
	Data   []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"data"`
	HasMore *bool   `json:"has_more"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
}

// pageAll walks a list two at a time, as a client would, and returns
// the items' keys in the order seen. It fails on a page that is not the
// list object or whose cursors do not match its ends.
func (f *fixture) pageAll(path, token string, key func(id, name string) string) []string {
	t := f.t
	t.Helper()
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 50 {
			t.Fatalf("%s: still has_more after 50 pages", path)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u := path + sep + "limit=2"
		if after != "" {
			u += "&after=" + url.QueryEscape(after)
		}
		r := f.do("GET", u, token, "")
		f.want(r, 200, "")
		var p pageJSON
		r.json(t, &p)
		if p.Object == nil || *p.Object != "list" || p.HasMore == nil {
			t.Fatalf("%s: not a list object: %s", u, r.body)
		}
		if len(p.Data) > 2 {
			t.Fatalf("%s: %d items on a page of 2", u, len(p.Data))
		}
		if len(p.Data) == 0 {
			if p.FirstID != nil || p.LastID != nil || *p.HasMore {
				t.Fatalf("%s: empty page with cursors or more: %s", u, r.body)
			}
			return seen
		}
		first, last := key(p.Data[0].ID, p.Data[0].Name), key(p.Data[len(p.Data)-1].ID, p.Data[len(p.Data)-1].Name)
		if p.FirstID == nil || p.LastID == nil || *p.FirstID != first || *p.LastID != last {
			t.Fatalf("%s: first_id/last_id do not name the page's ends: %s", u, r.body)
		}
		for _, d := range p.Data {
			seen = append(seen, key(d.ID, d.Name))
		}
		if !*p.HasMore {
			return seen
		}
		after = *p.LastID
	}
}

func byID(id, _ string) string     { return id }
func byName(_, name string) string { return name }

// wantOnce checks that a walk saw exactly want, each once.
func wantOnce(t *testing.T, list string, seen []string, want int) {
	t.Helper()
	counts := map[string]int{}
	for _, s := range seen {
		counts[s]++
	}
	if len(seen) != want || len(counts) != want {
		t.Errorf("%s: paged through %d items (%d distinct), want %d: %v", list, len(seen), len(counts), want, seen)
	}
}

func TestPaging(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { testPaging(t, newFixture(t, s.open)) })
	}
}

func testPaging(t *testing.T, f *fixture) {
	ctx := t.Context()
	// Five accounts besides alice, bob and carol; bob and carol for the
	// token that names them.
	alice := f.account("alice", 0)
	f.account("bob", 0)
	f.account("carol", 0)
	for i := range 5 {
		f.account(fmt.Sprintf("acct-%d", i), 0)
	}
	// Five keys (the hourly creation limit), five more ledger entries,
	// five files, five request log entries; the key creations and
	// deletions write the audit log.
	for i := range 5 {
		f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, fmt.Sprintf(`{"label":"k%d"}`, i)), 201, "")
		if _, err := f.store.Post(ctx, storage.Entry{AccountID: alice.ID, AmountCents: int64(100 + i), Kind: storage.EntryTopUp,
			Reference: fmt.Sprintf("seed-%d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.files.StoreGenerated(ctx, alice.ID, fmt.Sprintf("f%d.txt", i), strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	var log []storage.RequestLogEntry
	for i := range 5 {
		log = append(log, storage.RequestLogEntry{AccountID: alice.ID, At: t0.Add(time.Duration(i-5) * time.Minute),
			RequestID: fmt.Sprintf("r%d", i), Route: "v1", Method: "POST", Path: "/v1/chat/completions", Status: 200})
	}
	if err := f.store.AppendRequestLog(ctx, log); err != nil {
		t.Fatal(err)
	}
	// Three receipts (payments' top-ups) and six alert deliveries: each
	// top-up lifts the balance over the alert's threshold and a charge
	// takes it below again, one delivery per channel per crossing.
	if _, err := f.store.SetAlertSettings(ctx, storage.AlertSettings{AccountID: alice.ID, BelowCents: ptr(int64(1000)),
		WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "s3cret", Email: "ops@example.com"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, e := range []storage.Entry{
			{AccountID: alice.ID, AmountCents: 2000, Kind: storage.EntryTopUp, Reference: fmt.Sprintf("%sgeneric:p%d", storage.PaymentReferencePrefix, i)},
			{AccountID: alice.ID, AmountCents: -2000, Kind: storage.EntryCharge, Reference: fmt.Sprintf("charge-%d", i)},
		} {
			if _, err := f.store.Post(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}

	cases := []struct {
		list, path, token string
		key               func(id, name string) string
		want              int
	}{
		{"accounts (operator)", "/admin/accounts", f.operator, byName, 8},
		{"accounts (named)", "/admin/accounts", f.bobCarol, byName, 2},
		{"keys", "/admin/accounts/alice/keys", f.alice, byID, 5},
		{"ledger", "/admin/accounts/alice/ledger", f.alice, byID, 11},
		{"receipts", "/admin/accounts/alice/receipts", f.alice, byID, 3},
		{"alert deliveries", "/admin/accounts/alice/alerts/deliveries", f.alice, byID, 6},
		{"files", "/admin/accounts/alice/files", f.alice, byID, 5},
		{"activity", "/admin/accounts/alice/activity", f.alice, byID, 5},
		{"audit", "/admin/audit?account=alice", f.operator, byID, 5},
	}
	for _, c := range cases {
		wantOnce(t, c.list, f.pageAll(c.path, c.token, c.key), c.want)
	}

	// An empty list is a list too.
	f.account("empty", 0)
	for _, path := range []string{"/admin/accounts/empty/keys", "/admin/accounts/empty/ledger",
		"/admin/accounts/empty/files", "/admin/accounts/empty/activity", "/admin/audit?account=empty",
		"/admin/accounts/empty/receipts", "/admin/accounts/empty/alerts/deliveries"} {
		if seen := f.pageAll(path, f.operator, byID); len(seen) != 0 {
			t.Errorf("%s: %v", path, seen)
		}
	}

	// Bad paging parameters get the envelope, on every list.
	bad := []struct{ query, code string }{
		{"limit=0", "invalid_limit"},
		{"limit=1001", "invalid_limit"},
		{"limit=-1", "invalid_limit"},
		{"limit=two", "invalid_limit"},
		{"limit=", "invalid_limit"},
		{"after=" + url.QueryEscape("no such cursor"), "invalid_after"},
		{"before=x", "unsupported_parameter"},
	}
	for _, c := range cases {
		for _, b := range bad {
			sep := "?"
			if strings.Contains(c.path, "?") {
				sep = "&"
			}
			f.want(f.do("GET", c.path+sep+b.query, c.token, ""), 400, b.code)
		}
	}
	// A token naming accounts that do not exist lists those that do, and
	// a page that ends on the last one that exists says there is no more.
	ghost := hs256(t, testSecret, claims(map[string]any{"account": []any{"bob", "zz-none", "carol", "aa-none"}, "sub": "g"}))
	var p pageJSON
	f.do("GET", "/admin/accounts?limit=2", ghost, "").json(t, &p)
	if len(p.Data) != 2 || p.Data[0].Name != "bob" || p.Data[1].Name != "carol" || p.HasMore == nil || *p.HasMore {
		t.Errorf("named accounts, some missing: %+v has_more %v", p.Data, p.HasMore)
	}

	// A well-formed cursor that names nothing in a list ordered by
	// something other than its ids.
	f.want(f.do("GET", "/admin/accounts/alice/keys?after=key_0000000000000000", f.alice, ""), 400, "invalid_after")
	f.want(f.do("GET", "/admin/accounts/alice/ledger?after=le_0000000000000000", f.alice, ""), 400, "invalid_after")
	// Another account's entry is no cursor of this one's ledger.
	bob, _ := f.store.AccountByName(ctx, "bob")
	e, err := f.store.Post(ctx, storage.Entry{AccountID: bob.ID, AmountCents: 500, Kind: storage.EntryTopUp, Reference: "bob-seed"})
	if err != nil {
		t.Fatal(err)
	}
	f.want(f.do("GET", "/admin/accounts/alice/ledger?after="+e.ID, f.alice, ""), 400, "invalid_after")
	// A ledger entry that is no receipt is no cursor of the receipts.
	led, err := f.store.Entries(ctx, alice.ID, 1)
	if err != nil || len(led) != 1 {
		t.Fatal(led, err)
	}
	f.want(f.do("GET", "/admin/accounts/alice/receipts?after="+led[0].ID, f.alice, ""), 400, "invalid_after")
	f.want(f.do("GET", "/admin/accounts/alice/alerts/deliveries?after=alrt_0000000000000000", f.alice, ""), 400, "invalid_after")
}

func ptr[T any](v T) *T { return &v }
