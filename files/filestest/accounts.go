package filestest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// AccountMaker is implemented by MetaStores whose files must belong to
// existing accounts, as in the SQL stores, where files reference
// accounts(id). storage.Accounts has this method.
type AccountMaker interface {
	EnsureAccount(ctx context.Context, name string) (storage.Account, error)
}

// namedAccounts lets the suite speak of accounts by name to a store that
// knows them by id: it creates each account on first use and translates
// names to ids on the way in and back on the way out.
type namedAccounts struct {
	storage.FileMeta
	accounts AccountMaker

	mu    sync.Mutex
	ids   map[string]string // by name
	names map[string]string // by id
}

func (n *namedAccounts) id(ctx context.Context, name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if id, ok := n.ids[name]; ok {
		return id, nil
	}
	a, err := n.accounts.EnsureAccount(ctx, name)
	if err != nil {
		return "", fmt.Errorf("creating account %q for the suite: %w", name, err)
	}
	if n.ids == nil {
		n.ids, n.names = make(map[string]string), make(map[string]string)
	}
	n.ids[name], n.names[a.ID] = a.ID, name
	return a.ID, nil
}

func (n *namedAccounts) named(f storage.File) storage.File {
	n.mu.Lock()
	defer n.mu.Unlock()
	if name, ok := n.names[f.AccountID]; ok {
		f.AccountID = name
	}
	return f
}

func (n *namedAccounts) namedAll(fs []storage.File) []storage.File {
	for i := range fs {
		fs[i] = n.named(fs[i])
	}
	return fs
}

func (n *namedAccounts) Begin(ctx context.Context, f storage.File) (err error) {
	if f.AccountID, err = n.id(ctx, f.AccountID); err != nil {
		return err
	}
	return n.FileMeta.Begin(ctx, f)
}

func (n *namedAccounts) Commit(ctx context.Context, f storage.File, q storage.FileQuota, now time.Time) (err error) {
	if f.AccountID, err = n.id(ctx, f.AccountID); err != nil {
		return err
	}
	return n.FileMeta.Commit(ctx, f, q, now)
}

func (n *namedAccounts) Get(ctx context.Context, account, id string, now time.Time) (storage.File, error) {
	accountID, err := n.id(ctx, account)
	if err != nil {
		return storage.File{}, err
	}
	f, err := n.FileMeta.Get(ctx, accountID, id, now)
	return n.named(f), err
}

func (n *namedAccounts) List(ctx context.Context, account string, p storage.FileListParams, now time.Time) ([]storage.File, error) {
	accountID, err := n.id(ctx, account)
	if err != nil {
		return nil, err
	}
	fs, err := n.FileMeta.List(ctx, accountID, p, now)
	return n.namedAll(fs), err
}

func (n *namedAccounts) Usage(ctx context.Context, account string, now time.Time) (storage.FileUsage, error) {
	accountID, err := n.id(ctx, account)
	if err != nil {
		return storage.FileUsage{}, err
	}
	return n.FileMeta.Usage(ctx, accountID, now)
}

func (n *namedAccounts) Expire(ctx context.Context, account, id string, now time.Time) (storage.File, error) {
	accountID, err := n.id(ctx, account)
	if err != nil {
		return storage.File{}, err
	}
	f, err := n.FileMeta.Expire(ctx, accountID, id, now)
	return n.named(f), err
}

func (n *namedAccounts) Expired(ctx context.Context, now time.Time, limit int) ([]storage.File, error) {
	fs, err := n.FileMeta.Expired(ctx, now, limit)
	return n.namedAll(fs), err
}
