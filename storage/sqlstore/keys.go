package sqlstore

import (
	"context"
	"errors"

	"github.com/switchyardhq/switchyard/storage"
)

const keyColumns = `id, account_id, hint, label, created_at, COALESCE(revoked_at, 0), COALESCE(last_used_at, 0), ` + keyControlColumns

// CreateKey inserts a key after checking k's limits. The account row is
// locked first (FOR UPDATE on PostgreSQL; SQLite's write transaction locks
// the whole database), so concurrent creators for one account, in any
// process, count and insert one at a time.
func (s *Store) CreateKey(ctx context.Context, k storage.NewKey) (storage.APIKey, error) {
	if k.Hash == "" {
		return storage.APIKey{}, errors.New("storage: key hash is empty")
	}
	now := s.now()
	key := storage.APIKey{
		ID:        newID("key_"),
		AccountID: k.AccountID,
		Hint:      k.Hint,
		Label:     k.Label,
		CreatedAt: fromMicros(micros(now)),
		Controls:  k.Controls,
	}
	err := s.inTx(ctx, func(tx Tx) error {
		var seq, disabled int64
		err := tx.QueryRow(ctx, `SELECT key_seq, COALESCE(disabled_at, 0) FROM accounts WHERE id = $1 AND deleted_at IS NULL`+s.dialect.ForUpdate,
			k.AccountID).Scan(&seq, &disabled)
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		if disabled != 0 {
			return storage.ErrAccountDisabled
		}
		if k.MaxActive > 0 {
			var active int64
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`,
				k.AccountID).Scan(&active); err != nil {
				return err
			}
			if active >= int64(k.MaxActive) {
				return storage.ErrMaxKeys
			}
		}
		if k.MaxPerWindow > 0 && k.Window > 0 {
			// Revoked keys count: the limit is on creations.
			var recent int64
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM api_keys WHERE account_id = $1 AND created_at > $2`,
				k.AccountID, micros(now.Add(-k.Window))).Scan(&recent); err != nil {
				return err
			}
			if recent >= int64(k.MaxPerWindow) {
				return storage.ErrKeyCreationRate
			}
		}
		seq++
		if _, err := tx.Exec(ctx, `UPDATE accounts SET key_seq = $2 WHERE id = $1`, k.AccountID, seq); err != nil {
			return err
		}
		args := append([]any{key.ID, k.AccountID, seq, k.Hash, k.Hint, k.Label, micros(now)}, controlArgs(k.Controls)...)
		_, err = tx.Exec(ctx, `INSERT INTO api_keys (id, account_id, seq, hash, hint, label, created_at,
			expires_at, models, cidrs, spend_limit_cents, spend_period, rate_per_minute, stream_limit)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, args...)
		return err
	})
	if err != nil {
		return storage.APIKey{}, wrap(err, "creating key")
	}
	return key, nil
}

// ListKeys lists the account's keys, newest first.
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]storage.APIKey, error) {
	keys, err := queryAll(ctx, s.db, scanKey, `SELECT `+keyColumns+` FROM api_keys WHERE account_id = $1 ORDER BY seq DESC`, accountID)
	return keys, wrap(err, "listing keys")
}

// RevokeKey revokes the key and, when it was active, raises the key
// generation in the same transaction.
func (s *Store) RevokeKey(ctx context.Context, keyID string) (storage.APIKey, error) {
	var key storage.APIKey
	err := s.inTx(ctx, func(tx Tx) error {
		hashes, err := queryStrings(ctx, tx,
			`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING hash`,
			keyID, micros(s.now()))
		if err != nil {
			return err
		}
		if err := raiseKeyGeneration(ctx, tx, hashes); err != nil {
			return err
		}
		key, err = scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, keyID))
		if noRows(err) {
			return storage.ErrNotFound
		}
		return err
	})
	if err != nil {
		return storage.APIKey{}, wrap(err, "revoking key")
	}
	return key, nil
}

// LookupKey is one query on the unique hash index.
func (s *Store) LookupKey(ctx context.Context, hash string) (storage.KeyOwner, error) {
	o := storage.KeyOwner{KeyHash: hash}
	now := s.now()
	var c controlScan
	dest := append([]any{&o.KeyID, &o.KeyHint, &o.AccountID, &o.AccountName, &o.BalanceCents, &o.KeyGeneration, &o.PeriodSpendCents}, c.dest()...)
	err := s.db.QueryRow(ctx, `SELECT k.id, k.hint, a.id, a.name, a.balance_cents, g.generation,
			CASE WHEN k.spend_limit_cents > 0 AND k.period_start = `+periodStartSQL("k")+` THEN k.period_spend_cents
			ELSE 0 END, `+keyControlColumns+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id CROSS JOIN key_generation g
		WHERE k.hash = $1 AND k.revoked_at IS NULL AND a.deleted_at IS NULL AND a.disabled_at IS NULL AND g.id = 1`,
		hash, micros(storage.SpendPerDay.Start(now)), micros(storage.SpendPerMonth.Start(now))).
		Scan(dest...)
	if noRows(err) {
		return storage.KeyOwner{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.KeyOwner{}, wrap(err, "looking up key")
	}
	o.Controls = c.controls()
	if o.Controls.SpendLimitCents > 0 {
		o.Period = o.Controls.SpendPeriod.Name(now)
	}
	return o, nil
}

func scanKey(r Row) (storage.APIKey, error) {
	var k storage.APIKey
	var created, revoked, used int64
	var c controlScan
	if err := r.Scan(append([]any{&k.ID, &k.AccountID, &k.Hint, &k.Label, &created, &revoked, &used}, c.dest()...)...); err != nil {
		return storage.APIKey{}, err
	}
	k.CreatedAt = fromMicros(created)
	k.RevokedAt = fromMicros(revoked)
	k.LastUsedAt = fromMicros(used)
	k.Controls = c.controls()
	return k, nil
}

// Revision implements storage.Keys: the driver's, where it has one.
func (s *Store) Revision() (storage.Revision, bool) {
	if s.dialect.Revision == nil {
		return storage.Revision{}, false
	}
	return s.dialect.Revision()
}

// KeyState is one query on the accounts primary key and the one-row
// key_generation table.
func (s *Store) KeyState(ctx context.Context, accountID string) (balance, generation int64, err error) {
	err = s.db.QueryRow(ctx, `SELECT a.balance_cents, g.generation
		FROM accounts a CROSS JOIN key_generation g WHERE a.id = $1 AND g.id = 1`, accountID).
		Scan(&balance, &generation)
	if noRows(err) {
		return 0, 0, storage.ErrNotFound
	}
	return balance, generation, wrap(err, "reading balance")
}
