package sqlstore

import (
	"context"
	"fmt"

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
