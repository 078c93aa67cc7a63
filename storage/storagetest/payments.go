package storagetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testDisabledAccounts(t *testing.T) {
	t.Run("KeysRefusedWhileDisabled", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		_, hash := mustKey(t, s, a.ID)
		before, err := s.LookupKey(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.SetAccountDisabled(ctx, a.ID, true)
		if err != nil || !d.Disabled() || d.Name != "alice" {
			t.Fatalf("SetAccountDisabled(true) = %+v, %v; want alice, disabled", d, err)
		}
		if _, err := s.LookupKey(ctx, hash); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("LookupKey of a disabled account's key: %v, want ErrNotFound", err)
		}
		// A node holding the lookup from before learns of it by the
		// generation it reads with the balance.
		if _, gen, err := s.KeyState(ctx, a.ID); err != nil || gen <= before.KeyGeneration {
			t.Errorf("KeyState generation = %d, %v; want above %d", gen, err, before.KeyGeneration)
		}
		if byName, err := s.AccountByName(ctx, "alice"); err != nil || !byName.Disabled() {
			t.Errorf("AccountByName = %+v, %v; want it disabled", byName, err)
		}
		if list, err := s.ListAccounts(ctx, "", 0); err != nil || len(list) != 1 || !list[0].Disabled() {
			t.Errorf("ListAccounts = %+v, %v; want alice, disabled", list, err)
		}
		hash2 := newHash()
		if _, err := s.CreateKey(ctx, storage.NewKey{AccountID: a.ID, Hash: hash2, Hint: "sk-...x"}); !errors.Is(err, storage.ErrAccountDisabled) {
			t.Errorf("CreateKey on a disabled account: %v, want ErrAccountDisabled", err)
		}
		again, err := s.SetAccountDisabled(ctx, a.ID, true)
		if err != nil || !again.DisabledAt.Equal(d.DisabledAt) {
			t.Errorf("disabling again = %+v, %v; want it unchanged (%v)", again, err, d.DisabledAt)
		}
		e, err := s.SetAccountDisabled(ctx, a.ID, false)
		if err != nil || e.Disabled() {
			t.Fatalf("SetAccountDisabled(false) = %+v, %v", e, err)
		}
		if _, err := s.LookupKey(ctx, hash); err != nil {
			t.Errorf("LookupKey after enabling: %v", err)
		}
	})

	t.Run("Unknown", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		if _, err := s.SetAccountDisabled(t.Context(), "acct_nope", true); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("SetAccountDisabled of an unknown account: %v, want ErrNotFound", err)
		}
	})
}

// paymentEvent is a Stripe-like top-up event for the suite.
func paymentEvent(accountID, eventID, paymentID string, cents int64) storage.PaymentEvent {
	ref := storage.PaymentReferencePrefix + "stripe:" + paymentID
	return storage.PaymentEvent{
		Provider: "stripe", EventID: eventID, Type: "checkout.session.completed", AccountID: accountID,
		Payment: &storage.Payment{PaymentID: paymentID, AccountID: accountID, AmountCents: cents},
		Entries: []storage.Entry{{AccountID: accountID, AmountCents: cents, Kind: storage.EntryTopUp, Reference: ref, Note: "paid"}},
	}
}

func (h *harness) testPayments(t *testing.T) {
	t.Run("EventCreditsOnce", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		res, err := s.RecordPaymentEvent(ctx, paymentEvent(a.ID, "evt_1", "pi_1", 2500))
		if err != nil || res.Duplicate || len(res.Posted) != 1 || res.Outcome != "credited" {
			t.Fatalf("first delivery = %+v, %v; want one entry posted, credited", res, err)
		}
		for i := range 9 {
			res, err := s.RecordPaymentEvent(ctx, paymentEvent(a.ID, "evt_1", "pi_1", 2500))
			if err != nil || !res.Duplicate || len(res.Posted) != 0 {
				t.Errorf("delivery %d = %+v, %v; want a duplicate posting nothing", i+2, res, err)
			}
		}
		// Another event about the same payment (its asynchronous
		// success) posts nothing either.
		res, err = s.RecordPaymentEvent(ctx, paymentEvent(a.ID, "evt_2", "pi_1", 2500))
		if err != nil || res.Duplicate || len(res.Posted) != 0 || len(res.Existing) != 1 || res.Outcome != "already_applied" {
			t.Errorf("second event about pi_1 = %+v, %v; want nothing posted, already_applied", res, err)
		}
		wantBalance(t, s, a.ID, 2500)
		p, err := s.PaymentByID(ctx, "stripe", "pi_1")
		if err != nil || p.AccountID != a.ID || p.AmountCents != 2500 {
			t.Errorf("PaymentByID = %+v, %v", p, err)
		}
		if _, err := s.PaymentByID(ctx, "generic", "pi_1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("PaymentByID of another provider: %v, want ErrNotFound", err)
		}
	})

	t.Run("ConcurrentRedeliveries", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		results := make([]storage.PaymentResult, 10)
		errs := make([]error, len(results))
		parallel(len(results), func(i int) {
			results[i], errs[i] = procs.pick(i).RecordPaymentEvent(t.Context(), paymentEvent(a.ID, "evt_c", "pi_c", 1000))
		})
		checkErrs(t, "RecordPaymentEvent", errs)
		posted := 0
		for _, r := range results {
			posted += len(r.Posted)
		}
		if posted != 1 {
			t.Errorf("ten concurrent deliveries posted %d entries, want 1", posted)
		}
		wantBalance(t, procs[0], a.ID, 1000)
	})

	t.Run("RefundMayOverdrawAndReceiptsList", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		ctx := t.Context()
		mustPost(t, s, a.ID, 700, "operator-1")
		if _, err := s.RecordPaymentEvent(ctx, paymentEvent(a.ID, "evt_p", "pi_r", 1000)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Post(ctx, storage.Entry{AccountID: a.ID, AmountCents: -1500, Kind: storage.EntryCharge, Reference: "req:1"}); err != nil {
			t.Fatal(err)
		}
		refund := storage.PaymentEvent{Provider: "stripe", EventID: "evt_r", Type: "refund.created", AccountID: a.ID,
			Entries: []storage.Entry{{AccountID: a.ID, AmountCents: -1000, Kind: storage.EntryRefund,
				Reference: storage.PaymentReferencePrefix + "stripe:re_1"}}}
		res, err := s.RecordPaymentEvent(ctx, refund)
		if err != nil || res.Outcome != "debited" || len(res.Posted) != 1 || res.Posted[0].BalanceAfterCents != -800 {
			t.Fatalf("refund = %+v, %v; want debited to -800", res, err)
		}
		receipts, err := s.Receipts(ctx, a.ID, 0)
		if err != nil || len(receipts) != 2 || receipts[0].Kind != storage.EntryRefund || receipts[1].Kind != storage.EntryTopUp {
			t.Errorf("Receipts = %+v, %v; want the refund then the paid top-up, not the operator's or the charge", receipts, err)
		}
	})

	t.Run("IgnoredEventRecorded", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ev := storage.PaymentEvent{Provider: "stripe", EventID: "evt_x", Type: "customer.created", Outcome: "ignored"}
		res, err := s.RecordPaymentEvent(t.Context(), ev)
		if err != nil || res.Duplicate || res.Outcome != "ignored" {
			t.Errorf("first = %+v, %v", res, err)
		}
		if res, err := s.RecordPaymentEvent(t.Context(), ev); err != nil || !res.Duplicate {
			t.Errorf("again = %+v, %v; want a duplicate", res, err)
		}
	})

	t.Run("UnknownAccountWritesNothing", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		ev := paymentEvent("acct_nope", "evt_u", "pi_u", 500)
		if _, err := s.RecordPaymentEvent(t.Context(), ev); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("RecordPaymentEvent for an unknown account: %v, want ErrNotFound", err)
		}
		// The event was not recorded: a retry after the account exists
		// is not a duplicate.
		a := mustAccount(t, s, "late")
		ev = paymentEvent(a.ID, "evt_u", "pi_u", 500)
		if res, err := s.RecordPaymentEvent(t.Context(), ev); err != nil || res.Duplicate || len(res.Posted) != 1 {
			t.Errorf("retry = %+v, %v; want it posted", res, err)
		}
	})
}

func (h *harness) testAlerts(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	setUp := func(t *testing.T, s storage.Store, a storage.Account, below, percent *int64) {
		t.Helper()
		got, err := s.SetAlertSettings(t.Context(), storage.AlertSettings{AccountID: a.ID, BelowCents: below, BelowPercent: percent,
			WebhookURL: "http://127.0.0.1:9/hook", WebhookSecret: "s3cret", Email: "ops@example.com"})
		if err != nil || got.WebhookURL != "http://127.0.0.1:9/hook" || got.Email != "ops@example.com" {
			t.Fatalf("SetAlertSettings = %+v, %v", got, err)
		}
	}
	deliveries := func(t *testing.T, s storage.Store, a storage.Account) []storage.AlertDelivery {
		t.Helper()
		d, err := s.AlertDeliveries(t.Context(), a.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	charge := func(t *testing.T, s storage.Store, a storage.Account, cents int64, ref string) {
		t.Helper()
		if _, err := s.Post(t.Context(), storage.Entry{AccountID: a.ID, AmountCents: -cents, Kind: storage.EntryCharge, Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("OncePerCrossing", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		mustPost(t, s, a.ID, 1000, "t1")
		setUp(t, s, a, i64(500), nil)
		charge(t, s, a, 400, "req:1") // 600: above
		if d := deliveries(t, s, a); len(d) != 0 {
			t.Fatalf("above the threshold: %d deliveries queued", len(d))
		}
		charge(t, s, a, 200, "req:2") // 400: crossed
		for i := range 5 {
			charge(t, s, a, 10, fmt.Sprintf("req:below%d", i)) // still below
		}
		d := deliveries(t, s, a)
		if len(d) != 2 {
			t.Fatalf("one crossing queued %d deliveries, want 2 (webhook and email): %+v", len(d), d)
		}
		for _, x := range d {
			if x.BalanceCents != 400 || x.ThresholdCents != 500 || x.Status != storage.AlertPending {
				t.Errorf("delivery %+v: want balance 400, threshold 500, pending", x)
			}
		}
		mustPost(t, s, a.ID, 500, "t2") // 850: re-armed
		if d := deliveries(t, s, a); len(d) != 2 {
			t.Fatalf("rising above queued something: %d deliveries", len(d))
		}
		charge(t, s, a, 400, "req:3") // 450: crossed again
		if d := deliveries(t, s, a); len(d) != 4 {
			t.Errorf("second crossing: %d deliveries, want 4", len(d))
		}
	})

	t.Run("ShareOfLastTopUpInABatch", func(t *testing.T) {
		s, a := h.storeWithAlice(t, storage.Options{})
		setUp(t, s, a, nil, i64(20))
		mustPost(t, s, a.ID, 5000, "t1") // threshold 1000
		got, err := s.AlertSettings(t.Context(), a.ID)
		if th, ok := got.Threshold(); err != nil || !ok || th != 1000 || got.LastTopUpCents != 5000 {
			t.Fatalf("AlertSettings = %+v (threshold %d, %v), %v; want 20%% of 5000", got, th, ok, err)
		}
		var batch []storage.UsageRecord
		for i := range 20 {
			batch = append(batch, storage.UsageRecord{AccountID: a.ID, RequestID: fmt.Sprintf("b%d", i), CostCents: 250,
				Started: time.Unix(1, 0), Finished: time.Unix(2, 0)})
		}
		if _, err := s.SettleUsageBatch(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
		if d := deliveries(t, s, a); len(d) != 2 {
			t.Errorf("a batch that crossed: %d deliveries, want 2", len(d))
		}
	})

	t.Run("ConcurrentChargesOnTwoProcessesFireOnce", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		a := mustAccount(t, procs[0], "alice")
		mustPost(t, procs[0], a.ID, 2000, "t1")
		setUp(t, procs[0], a, i64(1000), nil)
		errs := make([]error, 40)
		parallel(len(errs), func(i int) {
			_, errs[i] = procs.pick(i).Post(t.Context(), storage.Entry{AccountID: a.ID, AmountCents: -50, Kind: storage.EntryCharge,
				Reference: fmt.Sprintf("req:%d", i)})
		})
		checkErrs(t, "Post", errs)
		if d := deliveries(t, procs[1], a); len(d) != 2 {
			t.Errorf("40 concurrent charges crossing once: %d deliveries, want 2", len(d))
		}
	})

	t.Run("ClaimAndFinish", func(t *testing.T) {
		procs := h.processes(t, storage.Options{})
		s := procs[0]
		a := mustAccount(t, s, "alice")
		mustPost(t, s, a.ID, 1000, "t1")
		setUp(t, s, a, i64(900), nil)
		charge(t, s, a, 200, "req:1")
		now := time.Now()
		claimed := make([]storage.AlertDelivery, 6)
		errs := make([]error, len(claimed))
		parallel(len(claimed), func(i int) {
			claimed[i], errs[i] = procs.pick(i).ClaimAlertDelivery(t.Context(), now, time.Minute)
		})
		ids := map[string]int{}
		for i, err := range errs {
			switch {
			case err == nil:
				ids[claimed[i].ID]++
			case !errors.Is(err, storage.ErrNotFound):
				t.Errorf("claim %d: %v", i, err)
			}
		}
		if len(ids) != 2 {
			t.Fatalf("six claimers took %v, want both deliveries once each", ids)
		}
		for id, n := range ids {
			if n != 1 {
				t.Errorf("delivery %s claimed %d times", id, n)
			}
		}
		if _, err := s.ClaimAlertDelivery(t.Context(), now, time.Minute); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("claim while leased: %v, want ErrNotFound", err)
		}
		var first string
		for id := range ids {
			first = id
			break
		}
		if err := s.FinishAlertDelivery(t.Context(), first, storage.AlertPending, "HTTP 500", now.Add(10*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimAlertDelivery(t.Context(), now.Add(5*time.Second), time.Minute); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("claim before its retry time: %v, want ErrNotFound", err)
		}
		again, err := s.ClaimAlertDelivery(t.Context(), now.Add(10*time.Second), time.Minute)
		if err != nil || again.ID != first || again.Attempts != 2 || again.LastError != "HTTP 500" {
			t.Fatalf("claim at its retry time = %+v, %v; want %s, second attempt", again, err, first)
		}
		if err := s.FinishAlertDelivery(t.Context(), first, storage.AlertDelivered, "", now); err != nil {
			t.Fatal(err)
		}
		for _, d := range deliveries(t, s, a) {
			if d.ID == first && (d.Status != storage.AlertDelivered || d.DeliveredAt.IsZero()) {
				t.Errorf("finished delivery = %+v, want delivered with a time", d)
			}
		}
	})
}
