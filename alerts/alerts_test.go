package alerts_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/switchyardhq/switchyard/alerts"
	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/sqlite"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

type fixture struct {
	store storage.Store
	acct  storage.Account
	clock *fakeclock.Clock
	n     int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := fakeclock.New(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC))
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sy.db"), storage.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.EnsureAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: st, acct: acct, clock: clock}
}

// post moves the balance by cents.
func (f *fixture) post(t *testing.T, cents int64) {
	t.Helper()
	f.n++
	kind := storage.EntryCharge
	if cents > 0 {
		kind = storage.EntryTopUp
	}
	if _, err := f.store.Post(t.Context(), storage.Entry{AccountID: f.acct.ID, AmountCents: cents, Kind: kind,
		Reference: fmt.Sprintf("r%d", f.n)}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) dispatcher(t *testing.T, cfg alerts.Config) *alerts.Dispatcher {
	t.Helper()
	cfg.Store, cfg.Now = f.store, f.clock.Now
	d, err := alerts.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hook is a webhook receiver that fails its first failures requests.
type hook struct {
	mu       sync.Mutex
	failures int
	got      []*http.Request
	bodies   [][]byte
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got, h.bodies = append(h.got, r), append(h.bodies, body)
	if h.failures > 0 {
		h.failures--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.got)
}

func TestWebhookOncePerCrossingSignedWithRetries(t *testing.T) {
	f := newFixture(t)
	h := &hook{failures: 2}
	srv := httptest.NewServer(h)
	defer srv.Close()
	below := int64(500)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID, BelowCents: &below,
		WebhookURL: srv.URL + "/alerts", WebhookSecret: "alert-secret"}); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(t, alerts.Config{Allow: loopback, Backoff: 30 * time.Second})
	f.post(t, 1000)
	f.post(t, -600) // 400: crossed
	f.post(t, -50)  // still below: nothing more
	if n := d.DeliverDue(t.Context()); n != 1 || h.count() != 1 {
		t.Fatalf("first round: %d attempts, %d requests; want 1", n, h.count())
	}
	if n := d.DeliverDue(t.Context()); n != 0 {
		t.Errorf("before the backoff ran out: %d attempts", n)
	}
	f.clock.Advance(30 * time.Second)
	d.DeliverDue(t.Context()) // second attempt fails too
	f.clock.Advance(59 * time.Second)
	if n := d.DeliverDue(t.Context()); n != 0 {
		t.Errorf("the second wait doubles: %d attempts after 59 s", n)
	}
	f.clock.Advance(time.Second)
	d.DeliverDue(t.Context())
	if h.count() != 3 {
		t.Fatalf("%d requests, want 3 (two failures, then delivered)", h.count())
	}
	log, err := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if err != nil || len(log) != 1 || log[0].Status != storage.AlertDelivered || log[0].Attempts != 3 || log[0].BalanceCents != 400 {
		t.Fatalf("delivery log = %+v, %v; want one delivered after 3 attempts at balance 400", log, err)
	}
	last := h.got[2]
	if err := hmacsig.Verify(last.Header.Get(hmacsig.Header), h.bodies[2], []byte("alert-secret"), f.clock.Now(), hmacsig.DefaultTolerance); err != nil {
		t.Errorf("signature: %v", err)
	}
	for _, want := range []string{`"type":"balance.below"`, `"account":"acme"`, `"balance_cents":400`, `"threshold_cents":500`, `"attempt":3`} {
		if !strings.Contains(string(h.bodies[2]), want) {
			t.Errorf("body %s lacks %s", h.bodies[2], want)
		}
	}
	// Risen above and fallen again: a second alert.
	f.post(t, 500) // 850
	f.post(t, -400)
	d.DeliverDue(t.Context())
	if h.count() != 4 {
		t.Errorf("after a second crossing: %d requests, want 4", h.count())
	}
}

func TestWebhookGivesUpAfterMaxAttempts(t *testing.T) {
	f := newFixture(t)
	h := &hook{failures: 100}
	srv := httptest.NewServer(h)
	defer srv.Close()
	below := int64(500)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID, BelowCents: &below,
		WebhookURL: srv.URL, WebhookSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(t, alerts.Config{Allow: loopback, MaxAttempts: 3, Backoff: time.Second})
	f.post(t, -1)
	for range 5 {
		d.DeliverDue(t.Context())
		f.clock.Advance(time.Hour)
	}
	log, _ := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if h.count() != 3 || len(log) != 1 || log[0].Status != storage.AlertFailed || !strings.Contains(log[0].LastError, "HTTP 500") {
		t.Errorf("%d requests, log %+v; want 3 attempts then failed with the last error", h.count(), log)
	}
}

func TestWebhookRefusesPrivateAddresses(t *testing.T) {
	f := newFixture(t)
	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	below := int64(500)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID, BelowCents: &below,
		WebhookURL: srv.URL, WebhookSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(t, alerts.Config{}) // loopback not allowed
	f.post(t, -1)
	d.DeliverDue(t.Context())
	log, _ := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if h.count() != 0 || len(log) != 1 || !strings.Contains(log[0].LastError, "not public") {
		t.Errorf("%d requests reached loopback, log %+v; want none and a 'not public' error", h.count(), log)
	}
}

// mailbox is an SMTP backend that keeps what it receives.
type mailbox struct {
	mu   sync.Mutex
	msgs []mail
}

type mail struct {
	from string
	to   []string
	data string
}

func (m *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: m}, nil }

type mailSession struct {
	box *mailbox
	cur mail
}

func (s *mailSession) Reset()        { s.cur = mail{} }
func (s *mailSession) Logout() error { return nil }
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.cur.from = from
	return nil
}
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	s.box.mu.Lock()
	s.box.msgs = append(s.box.msgs, s.cur)
	s.box.mu.Unlock()
	return nil
}

func TestEmailOverSMTP(t *testing.T) {
	box := &mailbox{}
	srv := smtp.NewServer(box)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	f := newFixture(t)
	percent := int64(20)
	if _, err := f.store.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: f.acct.ID, BelowPercent: &percent,
		Email: "owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	d := f.dispatcher(t, alerts.Config{SMTP: &alerts.SMTPConfig{Addr: ln.Addr().String(), From: "alerts@gateway.example"}})
	f.post(t, 5000)  // threshold: 20% of $50 = $10
	f.post(t, -4100) // $9.00
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	d.DeliverDue(ctx)
	box.mu.Lock()
	defer box.mu.Unlock()
	if len(box.msgs) != 1 {
		t.Fatalf("%d messages received, want 1", len(box.msgs))
	}
	m := box.msgs[0]
	if m.from != "alerts@gateway.example" || len(m.to) != 1 || m.to[0] != "owner@example.com" {
		t.Errorf("envelope from %q to %v", m.from, m.to)
	}
	for _, want := range []string{"Subject: Switchyard: balance of acme is below $10.00", "fell to $9.00"} {
		if !strings.Contains(m.data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.data)
		}
	}
	log, _ := f.store.AlertDeliveries(t.Context(), f.acct.ID, 0)
	if len(log) != 1 || log[0].Channel != storage.AlertEmail || log[0].Status != storage.AlertDelivered {
		t.Errorf("delivery log = %+v, want one delivered email", log)
	}
}
