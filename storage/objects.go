package storage

import (
	"context"

	"github.com/switchyardhq/switchyard/internal/objectid"
)

// ObjectIDs hands out object ids (package objectid spells them). Ids come
// from a per-account counter kept by the store, so that an id is never
// handed out twice, even to a client that sends no objects map and so
// cannot tell which ids it saw.
type ObjectIDs interface {
	// NextObjectID returns a new id of class c for the account:
	// obj1, obj2, ... for finals, el1, el2, ... for elements. Deleted
	// accounts still count. ErrNotFound if the account never existed.
	NextObjectID(ctx context.Context, accountID string, c objectid.Class) (string, error)
}
