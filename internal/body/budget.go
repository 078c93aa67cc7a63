package body

import (
	"sync"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// uncountedBodyBytes is the part of every body that takes nothing from
// the memory budget: every request holds more than this of the server's
// own (buffers, goroutine, parsed headers) whatever its body, so counting
// it would not bound memory, and a body no larger costs no bookkeeping.
// A body's first buffer is at most this large; memory beyond it is taken
// from the budget as bytes arrive.
const uncountedBodyBytes = 4 << 10

// Budget is the memory that request bodies read into memory may take
// together on this node, and the share of it one account may hold, so
// that no tenant's bodies, however slowly they arrive, leave the others
// none. The zero value is not usable; see NewBudget.
type Budget struct {
	total, share int64 // bytes: the node's budget, one account's share of it

	mu       sync.Mutex
	used     int64
	accounts map[string]int64 // bytes held per account; no entry: none
}

// NewBudget is a budget of total bytes, of which one account may hold
// share.
func NewBudget(total, share int64) *Budget {
	return &Budget{total: total, share: min(share, total), accounts: make(map[string]int64)}
}

// Take reserves n bytes for account, or refuses: 429 when the account
// holds its share already, 503 when the node's budget is spent.
func (b *Budget) Take(account string, n int64) *apierror.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	held := b.accounts[account]
	if held+n > b.share {
		return errAccountShare()
	}
	if b.used+n > b.total {
		return errBudget()
	}
	b.accounts[account] = held + n
	b.used += n
	return nil
}

// Give returns n bytes account took.
func (b *Budget) Give(account string, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if held := b.accounts[account] - n; held > 0 {
		b.accounts[account] = held
	} else {
		delete(b.accounts, account)
	}
}

// Held is what account holds.
func (b *Budget) Held(account string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accounts[account]
}
