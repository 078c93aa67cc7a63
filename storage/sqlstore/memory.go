package sqlstore

import (
	"context"
	"errors"

	"github.com/switchyardhq/switchyard/storage"
)

// The Store is the storage.Memory of the remember tool (tools/memory). Its
// methods use only strings, so this package does not import the tool's;
// the storage tests check that the interface is met.

// Facts returns the facts kept for the end user of the account, oldest
// first. An unknown account or end user has none.
func (s *Store) Facts(ctx context.Context, accountID, endUserID string) ([]string, error) {
	facts, err := queryStrings(ctx, s.db, `SELECT fact FROM memory_facts
		WHERE account_id = $1 AND end_user_id = $2 ORDER BY seq`, accountID, endUserID)
	if err != nil {
		return nil, wrap(err, "reading facts")
	}
	if facts == nil {
		// Callers may hand the list on as JSON, where nil would be null.
		facts = []string{}
	}
	return facts, nil
}

// Remember makes fact the newest fact of the end user, dropping an equal
// older one, and then drops the oldest facts beyond max, all in one
// transaction. The transaction starts by bumping the end user's fact
// counter, an upsert that locks the counter's row: concurrent Remembers
// for one end user, in any process, run one after the other, so none of
// them can see the facts half changed or leave more than max. Remembers
// for other end users, and the account's ledger, are not held up.
// storage.ErrNotFound if the account never existed.
func (s *Store) Remember(ctx context.Context, accountID, endUserID, fact string, max int) error {
	switch {
	case endUserID == "":
		return errors.New("storage: remembering a fact needs an end user")
	case fact == "":
		return errors.New("storage: fact is empty")
	case max <= 0:
		return errors.New("storage: remembering a fact needs a positive maximum number of facts")
	}
	now := micros(s.now())
	err := s.inTx(ctx, func(tx Tx) error {
		// Selecting from accounts makes an unknown account insert
		// nothing, and so return no row, instead of failing on the
		// foreign key with an error each database words its own way.
		var seq int64
		err := tx.QueryRow(ctx, `INSERT INTO memory_users (account_id, end_user_id, fact_seq)
			SELECT id, $2, 1 FROM accounts WHERE id = $1
			ON CONFLICT (account_id, end_user_id) DO UPDATE SET fact_seq = memory_users.fact_seq + 1
			RETURNING fact_seq`, accountID, endUserID).Scan(&seq)
		if noRows(err) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memory_facts WHERE account_id = $1 AND end_user_id = $2 AND fact = $3`,
			accountID, endUserID, fact); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO memory_facts (account_id, end_user_id, seq, fact, created_at)
			VALUES ($1, $2, $3, $4, $5)`, accountID, endUserID, seq, fact, now); err != nil {
			return err
		}
		// The subquery finds the newest fact beyond max, if any; when
		// there is none it is NULL and the comparison deletes nothing.
		_, err = tx.Exec(ctx, `DELETE FROM memory_facts WHERE account_id = $1 AND end_user_id = $2 AND seq <= (
				SELECT seq FROM memory_facts WHERE account_id = $1 AND end_user_id = $2
				ORDER BY seq DESC LIMIT 1 OFFSET $3)`,
			accountID, endUserID, int64(max))
		return err
	})
	return wrap(err, "remembering a fact")
}
