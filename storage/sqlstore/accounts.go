package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// EnsureAccount returns the live account named name, creating it if there
// is none. Concurrent calls for a new name, in any process, all return the
// one account the unique index let in.
func (s *Store) EnsureAccount(ctx context.Context, name string) (storage.Account, error) {
	if name == "" {
		return storage.Account{}, errors.New("storage: account name is empty")
	}
	a, err := s.AccountByName(ctx, name)
	if !errors.Is(err, storage.ErrNotFound) {
		return a, err
	}
	_, err = s.db.Exec(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) WHERE deleted_at IS NULL DO NOTHING`,
		newID("acct_"), name, micros(s.now()))
	if err != nil {
		return storage.Account{}, wrap(err, "creating account")
	}
	return s.AccountByName(ctx, name)
}

// AccountByName returns the live account named name.
func (s *Store) AccountByName(ctx context.Context, name string) (storage.Account, error) {
	a := storage.Account{Name: name}
	var created, disabled int64
	err := s.db.QueryRow(ctx, `SELECT id, created_at, COALESCE(disabled_at, 0) FROM accounts WHERE name = $1 AND deleted_at IS NULL`, name).
		Scan(&a.ID, &created, &disabled)
	if noRows(err) {
		return storage.Account{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.Account{}, wrap(err, "reading account")
	}
	a.CreatedAt = fromMicros(created)
	a.DisabledAt = fromMicros(disabled)
	return a, nil
}

// SetAccountDisabled sets or clears disabled_at. Disabling raises the key
// generation in the same transaction, so that cached lookups of the
// account's keys, on every node, are read again and refused.
func (s *Store) SetAccountDisabled(ctx context.Context, id string, disabled bool) (storage.Account, error) {
	var a storage.Account
	err := s.inTx(ctx, func(tx Tx) error {
		var created, was int64
		err := tx.QueryRow(ctx, `SELECT name, created_at, COALESCE(disabled_at, 0) FROM accounts
			WHERE id = $1 AND deleted_at IS NULL`+s.dialect.ForUpdate, id).Scan(&a.Name, &created, &was)
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		a.ID, a.CreatedAt, a.DisabledAt = id, fromMicros(created), fromMicros(was)
		switch {
		case disabled && was == 0:
			now := micros(s.now())
			if _, err := tx.Exec(ctx, `UPDATE accounts SET disabled_at = $2 WHERE id = $1`, id, now); err != nil {
				return err
			}
			a.DisabledAt = fromMicros(now)
			return raiseKeyGeneration(ctx, tx, []string{id})
		case !disabled && was != 0:
			// Nothing cached can hold a disabled account's key: its
			// lookups were refused, and refusals are not cached.
			a.DisabledAt = time.Time{}
			_, err := tx.Exec(ctx, `UPDATE accounts SET disabled_at = NULL WHERE id = $1`, id)
			return err
		}
		return nil
	})
	if err != nil {
		return storage.Account{}, wrap(err, "disabling account")
	}
	return a, nil
}

// DeleteAccount marks the account deleted and revokes its active keys, in
// one transaction that also tells other processes about the keys.
func (s *Store) DeleteAccount(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx Tx) error {
		now := micros(s.now())
		n, err := tx.Exec(ctx, `UPDATE accounts SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, id, now)
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		hashes, err := queryStrings(ctx, tx,
			`UPDATE api_keys SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL RETURNING hash`, id, now)
		if err != nil {
			return err
		}
		return raiseKeyGeneration(ctx, tx, hashes)
	})
	return wrap(err, "deleting account")
}

// CountAccounts counts live accounts.
func (s *Store) CountAccounts(ctx context.Context) (int, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM accounts WHERE deleted_at IS NULL`).Scan(&n)
	return int(n), wrap(err, "counting accounts")
}

// raiseKeyGeneration raises the key generation, in tx, when tx revokes
// keys (hashes) or disables an account, so that every cached lookup in every process is known
// stale by the next read of KeyState.
func raiseKeyGeneration(ctx context.Context, tx Tx, hashes []string) error {
	if len(hashes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE key_generation SET generation = generation + 1 WHERE id = $1`, 1)
	return err
}

// queryStrings returns the single string column of every row.
func queryStrings(ctx context.Context, q Querier, sql string, args ...any) ([]string, error) {
	return queryAll(ctx, q, func(r Row) (string, error) {
		var s string
		err := r.Scan(&s)
		return s, err
	}, sql, args...)
}

// ListAccounts lists live accounts by name, bytewise, with the balance
// each row keeps.
func (s *Store) ListAccounts(ctx context.Context, after string, limit int) ([]storage.AccountBalance, error) {
	byName := "name " + s.dialect.BytewiseCollation
	query := `SELECT id, name, created_at, COALESCE(disabled_at, 0), balance_cents FROM accounts
		WHERE deleted_at IS NULL AND ` + byName + ` > $1 ORDER BY ` + byName + limitClause(limit)
	out, err := queryAll(ctx, s.db, scanAccountBalance, query, after)
	return out, wrap(err, "listing accounts")
}

func scanAccountBalance(r Row) (storage.AccountBalance, error) {
	var a storage.AccountBalance
	var created, disabled int64
	if err := r.Scan(&a.ID, &a.Name, &created, &disabled, &a.BalanceCents); err != nil {
		return storage.AccountBalance{}, err
	}
	a.CreatedAt = fromMicros(created)
	a.DisabledAt = fromMicros(disabled)
	return a, nil
}
