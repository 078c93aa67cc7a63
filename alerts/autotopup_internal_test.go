package alerts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func TestAutoTopUpFailedAlertBodies(t *testing.T) {
	for _, failures := range []int64{1, storage.AutoTopUpMaxFailures} {
		del := storage.AlertDelivery{ID: "alrt_1", AccountID: "acct_1", AccountName: "acme", Kind: storage.AlertAutoTopUpFailed,
			BalanceCents: 412, ThresholdCents: 500, LimitCents: 2000, Detail: "card_declined: Your card was declined",
			Failures: failures, CreatedAt: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), Attempts: 1}
		body, err := webhookBody(del)
		if err != nil {
			t.Fatal(err)
		}
		var got AutoTopUpFailedPayload
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		want := AutoTopUpFailedPayload{ID: "alrt_1", Type: "auto_topup.failed", Account: "acme", AccountID: "acct_1",
			AmountCents: 2000, BalanceCents: 412, ThresholdCents: 500, Reason: del.Detail, Failures: failures,
			TurnedOff: failures >= storage.AutoTopUpMaxFailures, CreatedAt: 1795780800, Attempt: 1}
		if got != want {
			t.Errorf("webhook body = %+v, want %+v", got, want)
		}
		// The time is Unix seconds, a JSON integer, as every time of the
		// admin API.
		if !strings.Contains(string(body), `"created_at":1795780800,`) {
			t.Errorf("webhook body %s: want created_at 1795780800, an integer", body)
		}
		mail := string(message("gw@example.com", "ops@example.com", del))
		for _, s := range []string{"automatic top-up of acme failed", "$20.00", "card_declined: Your card was declined", "$4.12",
			"Alert alrt_1, 2026-11-27 12:00:00 UTC"} {
			if !strings.Contains(mail, s) {
				t.Errorf("mail lacks %q:\n%s", s, mail)
			}
		}
		if off := strings.Contains(mail, "now turned off"); off != want.TurnedOff {
			t.Errorf("failures %d: mail says turned off = %v:\n%s", failures, off, mail)
		}
	}
}
