package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

// The handler runs against both stores, as the gateway does.
var stores = []struct {
	name string
	open func(t *testing.T) storage.Store
}{
	{"sqlite", func(t *testing.T) storage.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "switchyard.db"), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"postgres", func(t *testing.T) storage.Store {
		s, err := postgres.Open(t.Context(), testenv.Postgres(t), storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

type fixture struct {
	t       *testing.T
	store   storage.Store
	hasher  policy.KeyHasher
	files   *files.Service
	limiter *limits.Local
	h       *Handler
	// Tokens: an operator's, alice's, and one naming bob and carol.
	operator, alice, bobCarol string
}

func newFixture(t *testing.T, open func(t *testing.T) storage.Store) *fixture {
	t.Helper()
	st := open(t)
	t.Cleanup(func() { st.Close() })
	hasher, err := policy.NewKeyHasher([]byte("key-secret-key-secret-key-secret-key"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	profile := policy.ProfileFor(policy.RevisionB)
	fsvc, err := files.NewService(files.Config{Meta: st, Blobs: dir, Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifierConfig{Secret: testSecret, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	lim := limits.NewLocal(limits.LocalConfig{})
	h, err := New(Config{
		Store: st, Hasher: hasher, Profile: profile, Verifier: v,
		Files: func() (*files.Service, error) { return fsvc, nil },
		Held:  lim, Now: func() time.Time { return t0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		t: t, store: st, hasher: hasher, files: fsvc, limiter: lim, h: h,
		operator: hs256(t, testSecret, claims(map[string]any{"account": nil, "role": "operator", "sub": "root"})),
		alice:    hs256(t, testSecret, claims(map[string]any{"sub": "alice-owner"})),
		bobCarol: hs256(t, testSecret, claims(map[string]any{"account": []any{"bob", "carol"}, "sub": "bc"})),
	}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// errCode is the envelope's code, or "" when the body is not one.
func (r reply) errCode() string {
	var env struct {
		Error struct{ Message, Type, Code string }
	}
	if json.Unmarshal([]byte(r.body), &env) != nil {
		return ""
	}
	return env.Error.Code
}

func (f *fixture) do(method, path, token, body string) reply {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = "198.51.100.7:5555"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	res := reply{w.Code, w.Header(), w.Body.String()}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if cc := res.header.Get("Cache-Control"); cc != "no-store" {
		f.t.Errorf("%s %s: Cache-Control %q", method, path, cc)
	}
	return res
}

// want checks status and, for errors, the code.
func (f *fixture) want(r reply, status int, code string) {
	f.t.Helper()
	if r.status != status || (code != "" && r.errCode() != code) {
		f.t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
}

func (f *fixture) account(name string, cents int64) storage.Account {
	f.t.Helper()
	a, err := f.store.EnsureAccount(f.t.Context(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	if cents > 0 {
		if _, err := f.store.Post(f.t.Context(), storage.Entry{AccountID: a.ID, AmountCents: cents, Kind: storage.EntryTopUp, Reference: "seed"}); err != nil {
			f.t.Fatal(err)
		}
	}
	return a
}

func (f *fixture) audit(account string) []storage.AuditEntry {
	f.t.Helper()
	es, err := f.store.AuditEntries(f.t.Context(), storage.AuditQuery{Account: account})
	if err != nil {
		f.t.Fatal(err)
	}
	return es
}

func TestHandler(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Run("TokenFailures", func(t *testing.T) { testTokenFailures(t, newFixture(t, s.open)) })
			t.Run("Scoping", func(t *testing.T) { testScoping(t, newFixture(t, s.open)) })
			t.Run("Keys", func(t *testing.T) { testKeys(t, newFixture(t, s.open)) })
			t.Run("TopUps", func(t *testing.T) { testTopUps(t, newFixture(t, s.open)) })
			t.Run("AccountTokensCannotTopUp", func(t *testing.T) { testAccountTokensCannotTopUp(t, newFixture(t, s.open)) })
			t.Run("UsageAndLedger", func(t *testing.T) { testUsage(t, newFixture(t, s.open)) })
			t.Run("Files", func(t *testing.T) { testFiles(t, newFixture(t, s.open)) })
			t.Run("AuditAndRequests", func(t *testing.T) { testAuditAndRequests(t, newFixture(t, s.open)) })
		})
	}
}

func testTokenFailures(t *testing.T, f *fixture) {
	f.account("alice", 0)
	cases := []struct {
		name, auth string
		audited    bool
	}{
		{"no header", "", false},
		{"expired", hs256(t, testSecret, claims(map[string]any{"exp": t0.Add(-time.Hour).Unix()})), true},
		{"wrong signature", hs256(t, []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), claims(nil)), false},
		{"alg none", unsigned(claims(nil)), false},
		{"wrong audience", hs256(t, testSecret, claims(map[string]any{"aud": "billing"})), true},
		{"missing exp", hs256(t, testSecret, claims(map[string]any{"exp": nil})), true},
		{"an API key", "sk-" + strings.Repeat("a", 48), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(f.audit(""))
			r := f.do("GET", "/admin/accounts/alice", c.auth, "")
			f.want(r, 401, "invalid_token")
			var env struct{ Error struct{ Type string } }
			r.json(t, &env)
			if env.Error.Type != "authentication_error" || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("type %q, WWW-Authenticate %q", env.Error.Type, r.header.Get("WWW-Authenticate"))
			}
			after := f.audit("")
			if got := len(after) - before; got != map[bool]int{true: 1, false: 0}[c.audited] {
				t.Fatalf("%d audit entries written, want audited=%v", got, c.audited)
			}
			if c.audited && (after[0].Action != "auth" || after[0].Outcome != "invalid_token" || after[0].RemoteIP != "198.51.100.7" || after[0].Subject != "ops@example.com") {
				t.Errorf("audit entry %+v", after[0])
			}
		})
	}
	// A basic-auth header is not a bearer token.
	req := httptest.NewRequest("GET", "/admin/me", nil)
	req.SetBasicAuth("u", "p")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	if w.Code != 401 {
		t.Errorf("basic auth: %d", w.Code)
	}
}

func testScoping(t *testing.T, f *fixture) {
	alice := f.account("alice", 700)
	bob := f.account("bob", 300)
	f.account("dave", 0)

	// Another account's, and a missing one, answer alike.
	other := f.do("GET", "/admin/accounts/bob", f.alice, "")
	missing := f.do("GET", "/admin/accounts/nobody", f.alice, "")
	f.want(other, 404, "account_not_found")
	f.want(missing, 404, "account_not_found")
	if strings.ReplaceAll(other.body, "bob", "X") != strings.ReplaceAll(missing.body, "nobody", "X") {
		t.Errorf("another account's answer %q differs from a missing one's %q", other.body, missing.body)
	}
	for _, p := range []string{"/keys", "/ledger", "/usage", "/files"} {
		f.want(f.do("GET", "/admin/accounts/bob"+p, f.alice, ""), 404, "account_not_found")
	}
	f.want(f.do("POST", "/admin/accounts/bob/keys", f.alice, `{"label":"x"}`), 404, "account_not_found")
	if keys, _ := f.store.ListKeys(t.Context(), bob.ID); len(keys) != 0 {
		t.Errorf("alice's token created a key for bob: %+v", keys)
	}
	if b, _ := f.store.Balance(t.Context(), bob.ID); b != 300 {
		t.Errorf("bob's balance moved to %d", b)
	}
	refusals := f.audit("bob")
	if len(refusals) < 2 || refusals[0].Outcome != "account_not_found" || refusals[0].Subject != "alice-owner" {
		t.Errorf("scope refusals audited as %+v", refusals)
	}
	f.want(f.do("POST", "/admin/accounts/bob/topups", f.alice, `{"cents":500}`), 404, "account_not_found")

	var own accountJSON
	r := f.do("GET", "/admin/accounts/alice", f.alice, "")
	f.want(r, 200, "")
	r.json(t, &own)
	if own.Name != "alice" || own.BalanceCents != 700 || own.CreatedAt != alice.CreatedAt.Unix() {
		t.Errorf("alice = %+v", own)
	}

	var l page[accountJSON]
	f.do("GET", "/admin/accounts", f.alice, "").json(t, &l)
	if len(l.Data) != 1 || l.Data[0].Name != "alice" {
		t.Errorf("alice's listing = %+v", l)
	}
	f.do("GET", "/admin/accounts", f.bobCarol, "").json(t, &l)
	if len(l.Data) != 1 || l.Data[0].Name != "bob" || l.Data[0].BalanceCents != 300 {
		t.Errorf("bob and carol's listing (carol does not exist) = %+v", l)
	}
	f.do("GET", "/admin/accounts", f.operator, "").json(t, &l)
	if len(l.Data) != 3 || l.Data[0].Name != "alice" || l.Data[1].Name != "bob" || l.Data[2].Name != "dave" {
		t.Errorf("operator's listing = %+v", l)
	}
	f.want(f.do("GET", "/admin/accounts/bob", f.operator, ""), 200, "")

	var me meJSON
	f.do("GET", "/admin/me", f.bobCarol, "").json(t, &me)
	if me.Subject != "bc" || me.Role != "account" || me.Operator || strings.Join(me.Accounts, ",") != "bob,carol" || me.CanTopUp {
		t.Errorf("me = %+v", me)
	}
	var raw map[string]any
	f.do("GET", "/admin/me", f.operator, "").json(t, &raw)
	if raw["operator"] != true || raw["role"] != "operator" || raw["accounts"] != nil || raw["can_top_up"] != true {
		t.Errorf("operator's me = %v", raw)
	}

	// Operators only.
	f.want(f.do("POST", "/admin/accounts", f.alice, `{"name":"eve"}`), 403, "permission_denied")
	f.want(f.do("GET", "/admin/audit", f.alice, ""), 403, "permission_denied")
	if _, err := f.store.AccountByName(t.Context(), "eve"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a non-operator created an account: %v", err)
	}
}

func testKeys(t *testing.T, f *fixture) {
	alice := f.account("alice", 0)
	bob := f.account("bob", 0)
	r := f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"laptop"}`)
	f.want(r, 201, "")
	var created struct {
		ID, Key, Hint, Label string
		CreatedAt            int64 `json:"created_at"`
	}
	r.json(t, &created)
	if !policy.ValidKeyFormat(created.Key) || created.Hint != policy.KeyHint(created.Key) || created.Label != "laptop" {
		t.Fatalf("created %+v", created)
	}
	owner, err := f.store.LookupKey(t.Context(), f.hasher.Hash(created.Key))
	if err != nil || owner.AccountID != alice.ID || owner.KeyID != created.ID {
		t.Fatalf("the new key does not authenticate: %+v, %v", owner, err)
	}

	r = f.do("GET", "/admin/accounts/alice/keys", f.alice, "")
	f.want(r, 200, "")
	if strings.Contains(r.body, created.Key) || strings.Contains(r.body, created.Key[3:20]) {
		t.Fatalf("the key listing shows the key: %s", r.body)
	}
	var keys page[KeyJSON]
	r.json(t, &keys)
	if len(keys.Data) != 1 || keys.Data[0].ID != created.ID || keys.Data[0].Hint != created.Hint || keys.Data[0].RevokedAt != nil {
		t.Errorf("keys = %+v", keys)
	}

	// Another account's key id through alice's path is unknown.
	bobKey, bobRec, err := policy.IssueKey(t.Context(), f.store, f.hasher, policy.ProfileFor(policy.RevisionB), "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	f.want(f.do("DELETE", "/admin/accounts/alice/keys/"+bobRec.ID, f.alice, ""), 404, "key_not_found")
	f.want(f.do("DELETE", "/admin/accounts/alice/keys/"+bobRec.ID, f.operator, ""), 404, "key_not_found")
	if _, err := f.store.LookupKey(t.Context(), f.hasher.Hash(bobKey)); err != nil {
		t.Errorf("bob's key was revoked through alice's path: %v", err)
	}
	_ = bob

	r = f.do("DELETE", "/admin/accounts/alice/keys/"+created.ID, f.alice, "")
	f.want(r, 200, "")
	var revoked KeyJSON
	r.json(t, &revoked)
	if revoked.ID != created.ID || revoked.RevokedAt == nil {
		t.Errorf("revoked = %+v", revoked)
	}
	if _, err := f.store.LookupKey(t.Context(), f.hasher.Hash(created.Key)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the revoked key still authenticates: %v", err)
	}
	again := f.do("DELETE", "/admin/accounts/alice/keys/"+created.ID, f.alice, "")
	f.want(again, 200, "")
	var second KeyJSON
	again.json(t, &second)
	if second.RevokedAt == nil || *second.RevokedAt != *revoked.RevokedAt {
		t.Errorf("second revoke = %+v, want the first's time %v", second, *revoked.RevokedAt)
	}
	f.want(f.do("DELETE", "/admin/accounts/alice/keys/key_nope", f.alice, ""), 404, "key_not_found")

	// The profile's limits apply as on the CLI: 5 creations per hour.
	for range 4 {
		f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, ``), 201, "")
	}
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{}`), 429, "rate_limit_exceeded")
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"`+strings.Repeat("x", 201)+`"}`), 400, "invalid_label")
	// A label is shown in tables, emails and logs: no control characters.
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"two\nlines"}`), 400, "invalid_label")
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"\u001b[31mred"}`), 400, "invalid_label")

	es := f.audit("alice")
	var creates, revokes int
	for _, e := range es {
		switch e.Action {
		case "key.create":
			creates++
		case "key.revoke":
			revokes++
		}
		if e.RemoteIP != "198.51.100.7" || e.At.IsZero() || e.Role == "" {
			t.Errorf("audit entry %+v lacks where or when", e)
		}
	}
	if creates != 9 || revokes != 5 {
		t.Errorf("audited %d creations and %d revocations, want 9 and 5", creates, revokes)
	}
	if es[0].Outcome != "invalid_label" || es[2].Outcome != "invalid_label" || es[3].Outcome != "rate_limit_exceeded" {
		t.Errorf("newest entries %+v, %+v, %+v, %+v", es[0], es[1], es[2], es[3])
	}
}

func testTopUps(t *testing.T, f *fixture) {
	alice := f.account("alice", 0)
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"usd":"4.99"}`, 400, "invalid_amount"},
		{`{"usd":"1000.01"}`, 400, "invalid_amount"},
		{`{"cents":499}`, 400, "invalid_amount"},
		{`{"cents":-500}`, 400, "invalid_amount"},
		{`{"usd":"12.345"}`, 400, "invalid_amount"},
		{`{"usd":"5","cents":500}`, 400, "invalid_amount"},
		{`{}`, 400, "invalid_amount"},
		{`{"usd":"5","extra":1}`, 400, "invalid_json"},
		{`{"usd":5}`, 400, "invalid_json"},
		{`{"usd":"5"} {"usd":"5"}`, 400, "invalid_json"},
		{`{"usd":"5","reference":"has space"}`, 400, "invalid_reference"},
		// Charge references are the server's own.
		{`{"usd":"5","reference":"req:0190a3f2-aaaa-7bbb-8ccc-123456789abc"}`, 400, "invalid_reference"},
	} {
		f.want(f.do("POST", "/admin/accounts/alice/topups", f.operator, c.body), c.status, c.code)
	}
	if b, _ := f.store.Balance(t.Context(), alice.ID); b != 0 {
		t.Fatalf("refused top-ups moved the balance to %d", b)
	}

	var res struct {
		Entry        ledgerJSON `json:"entry"`
		BalanceCents int64      `json:"balance_cents"`
	}
	r := f.do("POST", "/admin/accounts/alice/topups", f.operator, `{"usd":"5.00"}`)
	f.want(r, 201, "")
	r.json(t, &res)
	if res.BalanceCents != 500 || res.Entry.AmountCents != 500 || res.Entry.Kind != "topup" || res.Entry.BalanceAfterCents != 500 {
		t.Errorf("top-up = %+v", res)
	}
	r = f.do("POST", "/admin/accounts/alice/topups", f.operator, `{"cents":100000,"reference":"inv-1"}`)
	f.want(r, 201, "")
	r = f.do("POST", "/admin/accounts/alice/topups", f.operator, `{"cents":100000,"reference":"inv-1"}`)
	f.want(r, 200, "")
	r.json(t, &res)
	if res.BalanceCents != 100500 || res.Entry.Reference != "inv-1" || res.Entry.AmountCents != 100000 {
		t.Errorf("repeated top-up = %+v; want the balance unchanged at 100500", res)
	}
	// The same reference for another amount is not a retry: it changes
	// nothing and says so.
	for _, body := range []string{`{"cents":50000,"reference":"inv-1"}`, `{"usd":"999.99","reference":"inv-1"}`} {
		r = f.do("POST", "/admin/accounts/alice/topups", f.operator, body)
		f.want(r, 409, "reference_conflict")
		if !strings.Contains(r.body, "inv-1") || !strings.Contains(r.body, "$1000.00") {
			t.Errorf("conflict %s: the message should name the reference and the first amount", r.body)
		}
	}
	if b, _ := f.store.Balance(t.Context(), alice.ID); b != 100500 {
		t.Errorf("balance after conflicting replays = %d, want 100500", b)
	}
	big := `{"usd":"5","reference":"` + strings.Repeat("a", 20000) + `"}`
	f.want(f.do("POST", "/admin/accounts/alice/topups", f.operator, big), 413, "request_too_large")

	// Creating an account with a balance: checked before anything is written.
	f.want(f.do("POST", "/admin/accounts", f.operator, `{"name":"erin","usd":"2"}`), 400, "invalid_amount")
	if _, err := f.store.AccountByName(t.Context(), "erin"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a refused creation left the account: %v", err)
	}
	f.want(f.do("POST", "/admin/accounts", f.operator, `{"name":"has space"}`), 400, "invalid_account")
	r = f.do("POST", "/admin/accounts", f.operator, `{"name":"erin","usd":"25"}`)
	f.want(r, 201, "")
	var erin accountJSON
	r.json(t, &erin)
	if erin.Name != "erin" || erin.BalanceCents != 2500 {
		t.Errorf("created %+v", erin)
	}
	f.want(f.do("POST", "/admin/accounts", f.operator, `{"name":"erin"}`), 409, "account_exists")
	f.want(f.do("POST", "/admin/accounts", f.operator, `{"name":"frank"}`), 201, "")

	topups := 0
	for _, e := range f.audit("alice") {
		if e.Action == "topup" {
			topups++
		}
	}
	// 12 refused, 3 accepted (one a repeat), 2 conflicts; the 413 is
	// audited too.
	if topups != 18 {
		t.Errorf("%d top-ups audited, want 18", topups)
	}
}

// testAccountTokensCannotTopUp: a balance is credited by an operator (or,
// later, against a payment), never by the account's own token, whatever
// the body. (Another account's top-up answers 404 as every route does,
// testScoping.)
func testAccountTokensCannotTopUp(t *testing.T, f *fixture) {
	alice := f.account("alice", 0)
	f.account("bob", 0)
	for _, c := range []struct{ token, path, body string }{
		{f.alice, "/admin/accounts/alice/topups", `{"usd":"1000.00"}`},
		{f.alice, "/admin/accounts/alice/topups", `{"cents":500,"reference":"mine"}`},
		{f.alice, "/admin/accounts/alice/topups", `not json`},
		{f.bobCarol, "/admin/accounts/bob/topups", `{"usd":"25"}`},
	} {
		r := f.do("POST", c.path, c.token, c.body)
		f.want(r, 403, "permission_denied")
		var env struct {
			Error struct{ Message, Type string }
		}
		r.json(t, &env)
		if env.Error.Type != "permission_error" || !strings.Contains(env.Error.Message, "operator") {
			t.Errorf("%s %s: %+v; want a permission_error that says who may add funds", c.path, c.body, env.Error)
		}
	}
	if b, _ := f.store.Balance(t.Context(), alice.ID); b != 0 {
		t.Errorf("account tokens moved alice's balance to %d", b)
	}
	if es, _ := f.store.Entries(t.Context(), alice.ID, 0); len(es) != 0 {
		t.Errorf("account tokens posted %+v", es)
	}
	es := f.audit("alice")
	if len(es) != 3 || es[0].Action != "topup" || es[0].Outcome != "permission_denied" || es[0].Subject != "alice-owner" {
		t.Errorf("refused top-ups audited as %+v", es)
	}
	var me meJSON
	f.do("GET", "/admin/me", f.alice, "").json(t, &me)
	if me.CanTopUp {
		t.Errorf("alice's me = %+v: an account token must not be offered top-ups", me)
	}
}

func testUsage(t *testing.T, f *fixture) {
	alice := f.account("alice", 10_000)
	_, k, err := policy.IssueKey(t.Context(), f.store, f.hasher, policy.ProfileFor(policy.RevisionB), "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []struct {
		user string
		cost int64
		est  bool
	}{{"u1", 30, false}, {"u2", 12, true}, {"u1", 8, false}} {
		_, err := f.store.SettleUsage(t.Context(), storage.UsageRecord{
			AccountID: alice.ID, KeyID: k.ID, RequestID: "req" + string(rune('a'+i)), EndUser: u.user, Model: "m",
			PromptTokens: 100, CompletionTokens: 10, Estimated: u.est, Outcome: storage.OutcomeCompleted,
			Started: t0.Add(-time.Hour), Finished: t0.Add(-time.Hour), CostCents: u.cost,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var rep struct {
		Since, Until, By string
		Data             []UsageJSONRow
	}
	r := f.do("GET", "/admin/accounts/alice/usage?by=key", f.alice, "")
	f.want(r, 200, "")
	r.json(t, &rep)
	if rep.By != "key" || rep.Until != "2031-05-06" || rep.Since != "2031-04-06" || len(rep.Data) != 1 {
		t.Fatalf("report %+v", rep)
	}
	row := rep.Data[0]
	if *row.KeyID != k.ID || *row.KeyHint != k.Hint || row.Requests != 3 || row.CostCents != 50 ||
		row.PromptTokens != 300 || row.CompletionTokens != 30 || row.EstimatedRequests != 1 || row.EstimatedShare != 0.3333 {
		t.Errorf("key row %+v", row)
	}
	f.do("GET", "/admin/accounts/alice/usage?by=user&since=2031-05-06&until=2031-05-06", f.alice, "").json(t, &rep)
	if len(rep.Data) != 2 || *rep.Data[0].EndUser != "u1" || rep.Data[0].CostCents != 38 {
		t.Errorf("user rows %+v", rep.Data)
	}
	f.do("GET", "/admin/accounts/alice/usage", f.alice, "").json(t, &rep)
	if rep.By != "day" || len(rep.Data) != 1 || *rep.Data[0].Day != "2031-05-06" {
		t.Errorf("day rows %+v", rep)
	}
	f.do("GET", "/admin/accounts/alice/usage?since=2031-05-07&until=2031-05-08", f.alice, "").json(t, &rep)
	if len(rep.Data) != 0 || rep.Data == nil {
		t.Errorf("a period without usage: %+v", rep.Data)
	}
	f.do("GET", "/admin/accounts/alice/usage?by=model", f.alice, "").json(t, &rep)
	if rep.By != "model" || len(rep.Data) != 1 || rep.Data[0].Model == nil || *rep.Data[0].Model != "m" || rep.Data[0].CostCents != 50 {
		t.Errorf("model rows %+v", rep)
	}
	f.want(f.do("GET", "/admin/accounts/alice/usage?by=route", f.alice, ""), 400, "invalid_grouping")
	f.want(f.do("GET", "/admin/accounts/alice/usage?since=May", f.alice, ""), 400, "invalid_date")
	f.want(f.do("GET", "/admin/accounts/alice/usage?since=2031-05-06&until=2031-05-01", f.alice, ""), 400, "invalid_date")

	var led page[ledgerJSON]
	f.do("GET", "/admin/accounts/alice/ledger?limit=2", f.alice, "").json(t, &led)
	if len(led.Data) != 2 || led.Data[0].AmountCents != -8 || led.Data[0].BalanceAfterCents != 9950 || led.Data[1].AmountCents != -12 {
		t.Errorf("ledger = %+v", led)
	}
	f.want(f.do("GET", "/admin/accounts/alice/ledger?limit=0", f.alice, ""), 400, "invalid_limit")

	// Requests in flight hold part of the balance.
	adm, err := f.limiter.Admit(t.Context(), limits.AdmitRequest{Key: k.ID,
		Reserve: limits.Reservation{Account: alice.ID, Balance: 9950, Want: 120, Min: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var acct accountJSON
	f.do("GET", "/admin/accounts/alice", f.alice, "").json(t, &acct)
	if acct.BalanceCents != 9950 || acct.ReservedCents != 120 {
		t.Errorf("account with a hold = %+v", acct)
	}
	adm.Hold.Release()
	f.do("GET", "/admin/accounts/alice", f.alice, "").json(t, &acct)
	if acct.ReservedCents != 0 {
		t.Errorf("reserved after release = %d", acct.ReservedCents)
	}
}

func testFiles(t *testing.T, f *fixture) {
	alice := f.account("alice", 0)
	bob := f.account("bob", 0)
	a, err := f.files.StoreGenerated(t.Context(), alice.ID, "notes.txt", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.files.StoreGenerated(t.Context(), bob.ID, "bob.txt", strings.NewReader("bob"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Data    []fileJSON `json:"data"`
		HasMore bool       `json:"has_more"`
	}
	f.do("GET", "/admin/accounts/alice/files", f.alice, "").json(t, &l)
	if len(l.Data) != 1 || l.Data[0].ID != a.ID || l.Data[0].Filename != "notes.txt" || l.Data[0].Bytes != 5 || l.HasMore {
		t.Fatalf("files = %+v", l)
	}
	f.want(f.do("DELETE", "/admin/accounts/alice/files/"+b.ID, f.alice, ""), 404, "file_not_found")
	if _, err := f.files.Get(t.Context(), bob.ID, b.ID); err != nil {
		t.Errorf("bob's file went: %v", err)
	}
	f.want(f.do("DELETE", "/admin/accounts/alice/files/"+a.ID, f.alice, ""), 200, "")
	f.want(f.do("DELETE", "/admin/accounts/alice/files/"+a.ID, f.alice, ""), 404, "file_not_found")
	f.do("GET", "/admin/accounts/alice/files", f.alice, "").json(t, &l)
	if len(l.Data) != 0 {
		t.Errorf("files after delete = %+v", l)
	}
	es := f.audit("alice")
	if len(es) != 3 || es[1].Action != "file.delete" || es[1].Outcome != "ok" || es[1].Target != a.ID ||
		es[0].Outcome != "file_not_found" || es[2].Target != b.ID || es[2].Outcome != "file_not_found" {
		t.Errorf("file audit = %+v", es)
	}
}

func testAuditAndRequests(t *testing.T, f *fixture) {
	f.account("alice", 0)
	f.want(f.do("GET", "/admin/nope", f.alice, ""), 404, "not_found")
	f.want(f.do("GET", "/admin/accounts/alice/nope", f.alice, ""), 404, "not_found")
	r := f.do("PUT", "/admin/accounts/alice/keys", f.alice, "")
	f.want(r, 405, "method_not_allowed")
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `[1]`), 400, "invalid_json")
	f.want(f.do("POST", "/admin/accounts/alice/keys", f.alice, `{"label":"a","key":"sk-mine"}`), 400, "invalid_json")
	f.want(f.do("POST", "/admin/accounts/alice/topups", f.operator, `{"usd":"10"}`), 201, "")

	var l page[auditJSON]
	r = f.do("GET", "/admin/audit?limit=2", f.operator, "")
	f.want(r, 200, "")
	r.json(t, &l)
	if len(l.Data) != 2 || l.Data[0].Action != "topup" || l.Data[0].Subject != "root" || l.Data[0].Role != "operator" ||
		l.Data[0].Outcome != "ok" || l.Data[0].Detail != "$10.00" || l.Data[0].RemoteIP != "198.51.100.7" || l.Data[0].At <= 0 {
		t.Fatalf("audit = %+v", l.Data)
	}
	var next page[auditJSON]
	f.do("GET", "/admin/audit?after="+l.Data[1].ID, f.operator, "").json(t, &next)
	if len(next.Data) != 1 || next.Data[0].Outcome != "invalid_json" {
		t.Errorf("next page = %+v", next.Data)
	}
	f.do("GET", "/admin/audit?account=bob", f.operator, "").json(t, &next)
	if len(next.Data) != 0 {
		t.Errorf("bob's audit = %+v", next.Data)
	}
}
