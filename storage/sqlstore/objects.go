package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/objectid"
	"github.com/switchyardhq/switchyard/storage"
)

// The Store is the storage.ObjectIDs of the /v3 orchestrator. Its method
// takes a objectid.Class, so this package imports tools: a leaf
// package that imports nothing of ours, which keeps the import acyclic.

// objectCounterClass is the object_counters.class of each class of id.
// Finals and elements count separately: obj1 and el1 are different ids.
var objectCounterClass = map[objectid.Class]string{
	objectid.Final:   "obj",
	objectid.Element: "el",
}

// NextObjectID bumps the account's counter of class c and returns the id
// with its new value: obj1, obj2, ... for finals, el1, el2, ... for
// elements. It is one upsert, atomic on its own: concurrent callers in
// any process each get a different number, and as counters only count up,
// no number is ever handed out twice. Deleted accounts still count, like
// their ledgers. storage.ErrNotFound if the account never existed.
func (s *Store) NextObjectID(ctx context.Context, accountID string, c objectid.Class) (string, error) {
	class, ok := objectCounterClass[c]
	if !ok {
		return "", fmt.Errorf("storage: unknown object class %d", c)
	}
	// Selecting from accounts makes an unknown account insert nothing,
	// and so return no row, instead of failing on the foreign key.
	var n int64
	err := s.db.QueryRow(ctx, `INSERT INTO object_counters (account_id, class, last)
		SELECT id, $2, 1 FROM accounts WHERE id = $1
		ON CONFLICT (account_id, class) DO UPDATE SET last = object_counters.last + 1
		RETURNING last`, accountID, class).Scan(&n)
	if noRows(err) {
		return "", storage.ErrNotFound
	}
	if err != nil {
		return "", wrap(err, "allocating an object id")
	}
	return objectid.Format(c, n), nil
}

// Object states, the objects.state column.
const (
	objectLive    = "live"
	objectDeleted = "deleted"
	objectRenamed = "renamed"
)

// ObjectStates reads the rows of ids and the account's counters in two
// queries, however many ids.
func (s *Store) ObjectStates(ctx context.Context, accountID string, ids []string) (map[string]storage.ObjectState, error) {
	out := make(map[string]storage.ObjectState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	last := map[string]int64{}
	rows, err := s.db.Query(ctx, `SELECT class, last FROM object_counters WHERE account_id = $1`, accountID)
	if err != nil {
		return nil, wrap(err, "reading object counters")
	}
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			rows.Close()
			return nil, wrap(err, "reading object counters")
		}
		last[class] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap(err, "reading object counters")
	}
	args := []any{accountID}
	marks := make([]string, 0, len(ids))
	for _, id := range ids {
		c, n, ok := objectid.Parse(id)
		out[id] = storage.ObjectState{Issued: ok && n <= last[objectCounterClass[c]]}
		if ok {
			args = append(args, id)
			marks = append(marks, "$"+strconv.Itoa(len(args)))
		}
	}
	if len(marks) == 0 {
		return out, nil
	}
	rows, err = s.db.Query(ctx, `SELECT object_id, state, renamed_to, file_id FROM objects
		WHERE account_id = $1 AND object_id IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, wrap(err, "reading object states")
	}
	defer rows.Close()
	for rows.Next() {
		var id, state, renamed, file string
		if err := rows.Scan(&id, &state, &renamed, &file); err != nil {
			return nil, wrap(err, "reading object states")
		}
		st := out[id]
		// A row is only ever written for an id the server handed out.
		st.Issued = true
		st.Retired, st.RenamedTo, st.FileID = state != objectLive, renamed, file
		out[id] = st
	}
	return out, wrap(rows.Err(), "reading object states")
}

// SaveObject upserts id as live with fileID, in one transaction with the
// read of the file it replaces.
func (s *Store) SaveObject(ctx context.Context, accountID, id, fileID string) (string, error) {
	var replaced string
	err := s.inTx(ctx, func(tx Tx) error {
		var state, old string
		err := tx.QueryRow(ctx, `SELECT state, file_id FROM objects WHERE account_id = $1 AND object_id = $2`+
			s.db.Dialect().ForUpdate, accountID, id).Scan(&state, &old)
		switch {
		case noRows(err):
		case err != nil:
			return err
		case state != objectLive:
			return storage.ErrObjectRetired
		}
		n, err := tx.Exec(ctx, `INSERT INTO objects (account_id, object_id, state, renamed_to, file_id)
			SELECT id, $2, $3, '', $4 FROM accounts WHERE id = $1
			ON CONFLICT (account_id, object_id) DO UPDATE SET file_id = $4`, accountID, id, objectLive, fileID)
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		if old != fileID {
			replaced = old
		}
		return nil
	})
	if errors.Is(err, storage.ErrObjectRetired) || errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	return replaced, wrap(err, "saving an object")
}

// RetireObject marks id deleted or renamed, and hands a renamed object's
// file to its element, in one transaction.
func (s *Store) RetireObject(ctx context.Context, accountID, id, renamedTo string) (string, error) {
	var freed string
	err := s.inTx(ctx, func(tx Tx) error {
		var state, file string
		err := tx.QueryRow(ctx, `SELECT state, file_id FROM objects WHERE account_id = $1 AND object_id = $2`+
			s.db.Dialect().ForUpdate, accountID, id).Scan(&state, &file)
		switch {
		case noRows(err):
		case err != nil:
			return err
		case state != objectLive:
			return nil
		}
		state = objectDeleted
		if renamedTo != "" {
			state = objectRenamed
		}
		n, err := tx.Exec(ctx, `INSERT INTO objects (account_id, object_id, state, renamed_to, file_id)
			SELECT id, $2, $3, $4, '' FROM accounts WHERE id = $1
			ON CONFLICT (account_id, object_id) DO UPDATE SET state = $3, renamed_to = $4, file_id = ''`,
			accountID, id, state, renamedTo)
		if err != nil {
			return err
		}
		if n == 0 {
			return storage.ErrNotFound
		}
		if renamedTo == "" {
			freed = file
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO objects (account_id, object_id, state, renamed_to, file_id)
			VALUES ($1, $2, $3, '', $4)
			ON CONFLICT (account_id, object_id) DO UPDATE SET file_id = $4`, accountID, renamedTo, objectLive, file)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return "", err
	}
	return freed, wrap(err, "retiring an object")
}
