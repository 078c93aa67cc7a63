package storagetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

func (h *harness) testAudit(t *testing.T) {
	t.Run("AppendAndList", func(t *testing.T) {
		s, c := h.clockedStore(t)
		ctx := t.Context()
		var want []storage.AuditEntry
		for i := range 5 {
			account := "alice"
			if i%2 == 1 {
				account = "bob"
			}
			e, err := s.AppendAudit(ctx, storage.AuditEntry{
				Subject: "user-1", Role: "account", Action: "key.create", Account: account,
				Target: fmt.Sprintf("key_%d", i), RemoteIP: "192.0.2.1", Outcome: "ok", Detail: "label x",
			})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(e.ID, "aud_") || !e.At.Equal(c.Now()) {
				t.Errorf("AppendAudit = %+v; want an aud_ id at %v", e, c.Now())
			}
			want = append([]storage.AuditEntry{e}, want...)
			c.Advance(time.Second)
		}
		got, err := s.AuditEntries(ctx, storage.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("AuditEntries = %d entries, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
			}
		}

		page, err := s.AuditEntries(ctx, storage.AuditQuery{Limit: 2})
		if err != nil || len(page) != 2 || page[0].ID != want[0].ID || page[1].ID != want[1].ID {
			t.Errorf("first page = %+v, %v; want the two newest", page, err)
		}
		next, err := s.AuditEntries(ctx, storage.AuditQuery{Limit: 2, Before: page[1].ID})
		if err != nil || len(next) != 2 || next[0].ID != want[2].ID || next[1].ID != want[3].ID {
			t.Errorf("second page = %+v, %v; want entries 2 and 3", next, err)
		}
		alice, err := s.AuditEntries(ctx, storage.AuditQuery{Account: "alice"})
		if err != nil || len(alice) != 3 {
			t.Fatalf("alice's entries = %d, %v; want 3", len(alice), err)
		}
		for _, e := range alice {
			if e.Account != "alice" {
				t.Errorf("alice's listing holds %+v", e)
			}
		}
	})

	t.Run("ExplicitTime", func(t *testing.T) {
		s := h.store(t, storage.Options{})
		at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
		e, err := s.AppendAudit(t.Context(), storage.AuditEntry{At: at, Action: "auth.refused", Outcome: "invalid_token"})
		if err != nil || !e.At.Equal(at) {
			t.Fatalf("AppendAudit = %+v, %v; want At %v", e, err, at)
		}
		got, err := s.AuditEntries(t.Context(), storage.AuditQuery{Account: "nobody"})
		if err != nil || len(got) != 0 {
			t.Errorf("entries of an account without any = %+v, %v", got, err)
		}
	})
}

func (h *harness) testListAccounts(t *testing.T) {
	s := h.store(t, storage.Options{})
	ctx := t.Context()
	for _, name := range []string{"carol", "Bob", "alice", "dave"} {
		mustAccount(t, s, name)
	}
	alice := mustAccount(t, s, "alice")
	mustPost(t, s, alice.ID, 1234, "r")
	dave := mustAccount(t, s, "dave")
	if err := s.DeleteAccount(ctx, dave.ID); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListAccounts(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range all {
		names = append(names, a.Name)
		if a.Name == "alice" && (a.BalanceCents != 1234 || a.ID != alice.ID || !a.CreatedAt.Equal(alice.CreatedAt)) {
			t.Errorf("alice listed as %+v; want id %s, balance 1234", a, alice.ID)
		}
	}
	// Bytewise: upper case before lower case, on every database.
	if got, want := strings.Join(names, ","), "Bob,alice,carol"; got != want {
		t.Errorf("ListAccounts names = %s, want %s", got, want)
	}
	page, err := s.ListAccounts(ctx, "Bob", 1)
	if err != nil || len(page) != 1 || page[0].Name != "alice" {
		t.Errorf("ListAccounts after Bob, 1 = %+v, %v; want alice", page, err)
	}
}
