// Package storagetest is the contract every storage.Store passes: the
// sqlite and postgres packages run it from their tests.
package storagetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
	"github.com/switchyardhq/switchyard/storage"
)

// Opener opens a store for t, failing t if it cannot. Every call with the
// same t opens the same database, the way another process would; every
// test gets a fresh, empty database of its own. (DatabasePerTest helps
// with the first part.) The suite closes each store it opens, once.
//
// The suite calls the Opener from several goroutines at once to check
// that stores starting together migrate safely.
type Opener func(t *testing.T, opts storage.Options) storage.Store

// Run runs the contract suite against the stores open opens.
func Run(t *testing.T, open Opener) {
	h := &harness{open: open}
	t.Run("Accounts", h.testAccounts)
	t.Run("Keys", h.testKeys)
	t.Run("KeyControls", h.testKeyControls)
	t.Run("Ledger", h.testLedger)
	t.Run("Migrations", h.testMigrations)
	t.Run("Audit", h.testAudit)
	t.Run("ListAccounts", h.testListAccounts)
	t.Run("DisabledAccounts", h.testDisabledAccounts)
	t.Run("Payments", h.testPayments)
	t.Run("Alerts", h.testAlerts)
	t.Run("KeySpendAlerts", h.testKeySpendAlerts)
	t.Run("AutoTopUp", h.testAutoTopUp)
	t.Run("RequestLog", h.testRequestLog)
}

// DatabasePerTest turns create, which makes a fresh database for a test
// and returns how to reach it (a DSN or a path), into a function that
// returns the same database for every call of one test.
func DatabasePerTest(create func(t *testing.T) string) func(t *testing.T) string {
	var mu sync.Mutex
	dbs := make(map[*testing.T]string)
	return func(t *testing.T) string {
		mu.Lock()
		defer mu.Unlock()
		if db, ok := dbs[t]; ok {
			return db
		}
		db := create(t)
		dbs[t] = db
		t.Cleanup(func() {
			mu.Lock()
			delete(dbs, t)
			mu.Unlock()
		})
		return db
	}
}

// OpenWith is the Opener of a driver: it opens a store with open on the
// database that database, a DatabasePerTest, names for the test.
func OpenWith[S storage.Store](database func(t *testing.T) string, open func(ctx context.Context, db string, opts storage.Options) (S, error)) Opener {
	return func(t *testing.T, opts storage.Options) storage.Store {
		t.Helper()
		s, err := open(t.Context(), database(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

type harness struct {
	open Opener
}

// store opens a store on t's database and closes it when t ends.
func (h *harness) store(t *testing.T, opts storage.Options) storage.Store {
	t.Helper()
	s := h.open(t, opts)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// storeWithAlice opens a store as store does, with the account alice in
// it: where most tests start.
func (h *harness) storeWithAlice(t *testing.T, opts storage.Options) (storage.Store, storage.Account) {
	t.Helper()
	s := h.store(t, opts)
	return s, mustAccount(t, s, "alice")
}

// clockedStore opens a store as store does, on a clock of its own that
// the test moves.
func (h *harness) clockedStore(t *testing.T) (storage.Store, clock) {
	t.Helper()
	c := newClock()
	return h.store(t, c.options()), c
}

// clockedStoreWithAlice opens a store as storeWithAlice does, on a clock
// of its own that the test moves.
func (h *harness) clockedStoreWithAlice(t *testing.T) (storage.Store, storage.Account, clock) {
	t.Helper()
	c := newClock()
	s, a := h.storeWithAlice(t, c.options())
	return s, a, c
}

// processes is two stores on one database, standing for two processes.
type processes [2]storage.Store

// processes opens two stores on t's database with the same options.
func (h *harness) processes(t *testing.T, opts storage.Options) processes {
	t.Helper()
	return processes{h.store(t, opts), h.store(t, opts)}
}

// pick spreads concurrent callers over both processes: even callers on
// the first, odd ones on the second.
func (p processes) pick(i int) storage.Store { return p[i%2] }

// clock is a storage.Options.Now that moves only when told to. It starts
// on a whole microsecond and the suite moves it by whole ones, because the
// stores keep microseconds.
type clock struct{ *fakeclock.Clock }

func newClock() clock {
	return clock{fakeclock.New(time.Date(2031, 3, 14, 15, 9, 26, 535897000, time.UTC))}
}

func (c clock) options() storage.Options { return storage.Options{Now: c.Now} }

// newHash returns a random key hash in the form the store is given.
func newHash() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// mustAccount ensures the account name exists.
func mustAccount(t *testing.T, s storage.Store, name string) storage.Account {
	t.Helper()
	a, err := s.EnsureAccount(t.Context(), name)
	if err != nil {
		t.Fatalf("EnsureAccount(%q): %v", name, err)
	}
	return a
}

// mustKey creates a key without limits.
func mustKey(t *testing.T, s storage.Store, accountID string) (storage.APIKey, string) {
	t.Helper()
	hash := newHash()
	k, err := s.CreateKey(t.Context(), storage.NewKey{AccountID: accountID, Hash: hash, Hint: "sk-..." + hash[:4]})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	return k, hash
}

// mustPost credits the account.
func mustPost(t *testing.T, s storage.Store, accountID string, cents int64, reference string) {
	t.Helper()
	if _, err := s.Post(t.Context(), storage.Entry{AccountID: accountID, AmountCents: cents, Kind: storage.EntryTopUp, Reference: reference}); err != nil {
		t.Fatalf("Post: %v", err)
	}
}

// mustSettle settles u.
func mustSettle(t *testing.T, s storage.Usage, u storage.UsageRecord) {
	t.Helper()
	if _, err := s.SettleUsage(t.Context(), u); err != nil {
		t.Fatalf("SettleUsage: %v", err)
	}
}

// wantBalance reports a balance of the account other than want.
func wantBalance(t *testing.T, s storage.Store, accountID string, want int64) {
	t.Helper()
	if b, err := s.Balance(t.Context(), accountID); err != nil || b != want {
		t.Errorf("Balance of %s = %d, %v; want %d", accountID, b, err, want)
	}
}

// checkErrs reports every non-nil error of concurrent calls.
func checkErrs(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s %d: %v", what, i, err)
		}
	}
}

// parallel runs n calls of fn at once and waits for them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}
