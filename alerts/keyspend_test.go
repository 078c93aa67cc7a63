package alerts_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/storage"
)

// TestKeySpendAlertThroughTheLedgerWriter charges a key with a $1 daily
// limit through the ledger writer on SQLite: at 80% one signed webhook
// and one email, nothing more that day, and again the next day.
func TestKeySpendAlertThroughTheLedgerWriter(t *testing.T) {
	box := &mailbox{}
	srv := smtp.NewServer(box)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	h := &hook{}
	web := httptest.NewServer(h)
	defer web.Close()

	f := newFixture(t)
	f.post(t, 10_000)
	percent := int64(80)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID, KeySpendPercent: &percent,
		WebhookURL: web.URL, WebhookSecret: "alert-secret", Email: "owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	key, err := f.store.CreateKey(t.Context(), storage.NewKey{AccountID: f.acct.ID, Hash: strings.Repeat("ab", 32),
		Label: "ci\r\nBcc: x@evil.example", Controls: storage.KeyControls{SpendLimitCents: 100, SpendPeriod: storage.SpendPerDay}})
	if err != nil {
		t.Fatal(err)
	}
	w := billing.NewLedgerWriter(billing.WriterConfig{Store: f.store, Now: f.clock.Now})
	defer w.Close()
	n := 0
	charge := func(cents ...int64) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, len(cents))
		for _, c := range cents {
			n++
			wg.Add(1)
			now := f.clock.Now()
			w.Enqueue(storage.UsageRecord{AccountID: f.acct.ID, KeyID: key.ID, RequestID: fmt.Sprintf("req%d", n),
				CostCents: c, Started: now, Finished: now}, func(_ storage.UsageRecord, err error) {
				errs <- err
				wg.Done()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	d := f.dispatcher(t, alerts.Config{Allow: loopback, SMTP: &alerts.SMTPConfig{Addr: ln.Addr().String(), From: "alerts@gateway.example"}})

	charge(30, 30, 19) // 79 of 100
	if got := d.DeliverDue(t.Context()); got != 0 {
		t.Fatalf("79 of 100 at 80%%: %d deliveries sent", got)
	}
	charge(1)         // 80: reached
	charge(10, 5, 20) // past the share, past the limit: no more alerts
	got := d.DeliverDue(t.Context())
	box.mu.Lock()
	msgs := append([]mail(nil), box.msgs...)
	box.mu.Unlock()
	if got != 2 || h.count() != 1 || len(msgs) != 1 {
		t.Fatalf("the crossing: %d attempts, %d webhooks, %d mails; want 2, 1, 1", got, h.count(), len(msgs))
	}

	var p alerts.KeySpendPayload
	if err := json.Unmarshal(h.bodies[0], &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "key.spend_limit_near" || p.Account != "acme" || p.KeyID != key.ID || p.SpendCents != 80 ||
		p.ThresholdCents != 80 || p.LimitCents != 100 || p.SpendPeriod != "day" || p.Attempt != 1 {
		t.Errorf("payload %+v", p)
	}
	sig := h.got[0].Header.Get(hmacsig.Header)
	if err := hmacsig.Verify(sig, h.bodies[0], []byte("alert-secret"), f.clock.Now(), 5*time.Minute); err != nil {
		t.Errorf("signature %q: %v", sig, err)
	}
	mail := msgs[0].data
	for _, want := range []string{"Subject: Switchyard: key ciBcc: x@evil.example (" + key.ID + ") of acme has spent $0.80 of its daily limit of $1.00\r\n",
		"spent $0.80 this day (UTC)"} {
		if !strings.Contains(mail, want) {
			t.Errorf("mail lacks %q:\n%s", want, mail)
		}
	}
	if strings.Contains(mail, "\r\nBcc:") {
		t.Errorf("the key's label added a header:\n%s", mail)
	}

	// The next UTC day counts afresh.
	f.clock.Set(storage.SpendPerDay.Start(f.clock.Now()).Add(24*time.Hour + time.Hour))
	charge(50)
	if got := d.DeliverDue(t.Context()); got != 0 {
		t.Fatalf("50 of 100 the next day: %d deliveries sent", got)
	}
	charge(40)
	if got := d.DeliverDue(t.Context()); got != 2 || h.count() != 2 {
		t.Fatalf("the next day's crossing: %d attempts, %d webhooks; want 2, 2", got, h.count())
	}
	log, err := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if err != nil || len(log) != 4 {
		t.Fatalf("delivery log: %d entries, %v; want 4", len(log), err)
	}
	for _, e := range log {
		if e.Kind != storage.AlertKeySpend || e.Status != storage.AlertDelivered || e.KeyID != key.ID {
			t.Errorf("delivery %+v: want a delivered key spend alert", e)
		}
	}
}
