package billing

import (
	"sync"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// commitHooks are the functions told of the accounts each batch charged,
// once it committed. They run on the writer's goroutine, so they must not
// wait: auto top-up's worker only marks the accounts for itself.
type commitHooks struct {
	mu    sync.Mutex
	next  int
	hooks map[int]func(accountIDs []string)
}

var commitHookGoroutine = guard.Name("ledger_commit_hook")

// OnCommit has f told, after every batch that committed, of the accounts
// it charged (each once). It returns how to stop telling f; a config
// reload registers its hook before the old config removes its own.
func (w *LedgerWriter) OnCommit(f func(accountIDs []string)) (remove func()) {
	h := &w.commitHooks
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hooks == nil {
		h.hooks = make(map[int]func([]string))
	}
	id := h.next
	h.next++
	h.hooks[id] = f
	return func() {
		h.mu.Lock()
		delete(h.hooks, id)
		h.mu.Unlock()
	}
}

// committed tells the hooks of the accounts of the records settled
// without an error. A hook's panic is counted and logged by guard, and
// charges go on.
func (w *LedgerWriter) committed(settled []storage.Settlement) {
	h := &w.commitHooks
	h.mu.Lock()
	if len(h.hooks) == 0 {
		h.mu.Unlock()
		return
	}
	hooks := make([]func([]string), 0, len(h.hooks))
	for _, f := range h.hooks {
		hooks = append(hooks, f)
	}
	h.mu.Unlock()
	seen := make(map[string]struct{}, len(settled))
	var accounts []string
	for _, s := range settled {
		if s.Err != nil || s.Record.AccountID == "" {
			continue
		}
		if _, ok := seen[s.Record.AccountID]; !ok {
			seen[s.Record.AccountID] = struct{}{}
			accounts = append(accounts, s.Record.AccountID)
		}
	}
	if len(accounts) == 0 {
		return
	}
	for _, f := range hooks {
		_ = guard.Run(commitHookGoroutine, func() { f(accounts) })
	}
}
