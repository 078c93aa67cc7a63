package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/admin"
	"github.com/switchyardhq/switchyard/storage"
)

// TestListJSONIsTheAdminListObject: --json listings have the admin API's
// list object, so a script reads both alike.
func TestListJSONIsTheAdminListObject(t *testing.T) {
	id := func(s string) string { return "id-" + s }
	cases := []struct {
		items []string
		want  string
	}{
		{nil, `{"object":"list","data":[],"has_more":false,"first_id":null,"last_id":null}`},
		{[]string{"a"}, `{"object":"list","data":["A"],"has_more":false,"first_id":"id-a","last_id":"id-a"}`},
		{[]string{"a", "b", "c"}, `{"object":"list","data":["A","B","C"],"has_more":false,"first_id":"id-a","last_id":"id-c"}`},
	}
	for _, c := range cases {
		out := listJSON(c.items, func(s string) string { return string(rune(s[0] - 'a' + 'A')) }, id)
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("listJSON(%q) = %s, want %s", c.items, b, c.want)
		}
	}
}

// TestJSONTimesAreUnixSeconds: --json writes times as the admin API
// does, integers of Unix seconds, null for what has not happened.
func TestJSONTimesAreUnixSeconds(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	used := time.Date(2026, 11, 27, 15, 4, 5, 0, time.UTC)
	expires := time.Date(2026, 12, 27, 15, 0, 0, 0, time.UTC)
	key := storage.APIKey{ID: "key_1", Hint: "sk-...a1B2", CreatedAt: created, LastUsedAt: used,
		Controls: storage.KeyControls{ExpiresAt: expires}}
	b, err := json.Marshal(admin.KeyOf(key))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"created_at":1795428000`, `"revoked_at":null`, `"last_used_at":1795791845`, `"expires_at":1798383600`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("key --json %s lacks %s", b, want)
		}
	}
	acct := storage.AccountBalance{Account: storage.Account{ID: "acct_1", Name: "acme", CreatedAt: created, DisabledAt: used}}
	if b, err = json.Marshal(accountJSONOf(acct)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"created_at":1795428000`, `"disabled":true`, `"disabled_at":1795791845`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("account --json %s lacks %s", b, want)
		}
	}
}
