package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func TestKeySpendAlertSettingsAndLog(t *testing.T) {
	f := newFixture(t, stores[0].open)
	withPayments(t, f)
	acct, err := f.store.EnsureAccount(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"key_spend_percent":0,"webhook_url":"https://hooks.example/a"}`,
		`{"key_spend_percent":101,"webhook_url":"https://hooks.example/a"}`,
		`{"key_spend_percent":80}`, // nowhere to send it
	} {
		if r := f.do("PUT", "/admin/accounts/alice/alerts", f.alice, body); r.status != 400 || r.errCode() != "invalid_alert" {
			t.Errorf("PUT %s: %d %s, want 400 invalid_alert", body, r.status, r.body)
		}
	}
	var got AlertsJSON
	r := f.do("PUT", "/admin/accounts/alice/alerts", f.alice, `{"key_spend_percent":80,"webhook_url":"https://hooks.example/a"}`)
	r.json(t, &got)
	if r.status != 200 || got.KeySpendPercent == nil || *got.KeySpendPercent != 80 || got.ThresholdCents != nil {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	f.do("GET", "/admin/accounts/alice/alerts", f.alice, "").json(t, &got)
	if got.KeySpendPercent == nil || *got.KeySpendPercent != 80 {
		t.Fatalf("GET after PUT: key_spend_percent %v", got.KeySpendPercent)
	}

	if _, err := f.store.Post(t.Context(), storage.Entry{AccountID: acct.ID, AmountCents: 1000, Kind: storage.EntryTopUp, Reference: "t1"}); err != nil {
		t.Fatal(err)
	}
	k, err := f.store.CreateKey(t.Context(), storage.NewKey{AccountID: acct.ID, Hash: strings.Repeat("cd", 32), Label: "ci",
		Controls: storage.KeyControls{SpendLimitCents: 100, SpendPeriod: storage.SpendPerMonth}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := f.store.SettleUsageBatch(t.Context(), []storage.UsageRecord{
		{AccountID: acct.ID, KeyID: k.ID, RequestID: "r1", CostCents: 85, Started: now, Finished: now}}); err != nil {
		t.Fatal(err)
	}
	r = f.do("GET", "/admin/accounts/alice/alerts/deliveries", f.alice, "")
	for _, want := range []string{`"type":"key.spend_limit_near"`, `"key_id":"` + k.ID + `"`, `"key_label":"ci"`,
		`"spend_cents":85`, `"limit_cents":100`, `"threshold_cents":80`, `"spend_period":"month"`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("delivery log lacks %s: %d %s", want, r.status, r.body)
		}
	}
	if strings.Contains(r.body, `"balance_cents"`) {
		t.Errorf("a key spend alert shows a balance: %s", r.body)
	}
}
