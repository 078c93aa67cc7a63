package e2e

import (
	"sync"
	"testing"
	"time"
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
