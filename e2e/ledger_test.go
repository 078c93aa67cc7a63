package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// running is the set of gateways started and not stopped or killed.
var running gateways

type gateways struct {
	mu  sync.Mutex
	set map[*gateway]bool
}

func (gs *gateways) add(g *gateway) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.set == nil {
		gs.set = make(map[*gateway]bool)
	}
	gs.set[g] = true
}

func (gs *gateways) remove(g *gateway) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	delete(gs.set, g)
}

func (gs *gateways) list() []*gateway {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	var out []*gateway
	for g := range gs.set {
		out = append(out, g)
	}
	return out
}

// settleLedgers waits until no running gateway has a charge pending in
// its ledger writer (switchyard_ledger_pending), so that what a test
// reads from the store next includes every request it has seen answered:
// a gateway hands a request's charge to the writer before the response
// ends, and commits it in the next group commit, a few milliseconds
// later.
func settleLedgers(t *testing.T) {
	t.Helper()
	for _, g := range running.list() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			pending, ok := scrape(t, g)["switchyard_ledger_pending"]
			if !ok {
				t.Fatal("the gateway exports no switchyard_ledger_pending")
			}
			if pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v charges still pending in the ledger writer after 10s", pending)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// ledgerCharges lists an account's charges, newest first, as the store
// has them now.
func ledgerCharges(t *testing.T, st storage.Store, accountID string) []storage.LedgerEntry {
	t.Helper()
	var out []storage.LedgerEntry
	for _, le := range ledgerEntries(t, st, accountID) {
		if le.Kind == storage.EntryCharge {
			out = append(out, le)
		}
	}
	return out
}

func ledgerEntries(t *testing.T, st storage.Store, accountID string) []storage.LedgerEntry {
	t.Helper()
	all, err := st.Entries(context.Background(), accountID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// ledgerBook is an account's balance with what its ledger says of it.
type ledgerBook struct {
	balance int64 // the account's balance
	sum     int64 // the sum of its ledger entries
	last    int64 // the running balance of its newest entry; 0 without entries
	entries []storage.LedgerEntry
}

// consistent reports whether the ledger sums to the balance and ends at it.
func (b ledgerBook) consistent() bool {
	return b.sum == b.balance && (len(b.entries) == 0 || b.last == b.balance)
}

// readLedger reads an account's balance and ledger.
func readLedger(t *testing.T, st storage.Store, accountID string) ledgerBook {
	t.Helper()
	bal, err := st.Balance(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	b := ledgerBook{balance: bal, entries: ledgerEntries(t, st, accountID)}
	for _, le := range b.entries {
		b.sum += le.AmountCents
	}
	if len(b.entries) > 0 {
		b.last = b.entries[0].BalanceAfterCents
	}
	return b
}
