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
	// ObjectStates returns what the store knows of each of ids for the
	// account, one entry per id. An id that is not well formed, or whose
	// number the account's counter has not reached, is not Issued.
	ObjectStates(ctx context.Context, accountID string, ids []string) (map[string]ObjectState, error)
	// SaveObject records that id lives with fileID as the stored file of
	// its current version ("" when it could not be stored), and returns
	// the file of the version it replaces ("" if none), which the caller
	// deletes. ErrObjectRetired if id was deleted or renamed.
	SaveObject(ctx context.Context, accountID, id, fileID string) (replaced string, err error)
	// RetireObject records that id was deleted (renamedTo "") or folded
	// into a document as the element renamedTo, which then lives with
	// id's stored file. It returns the file id no longer holds and the
	// caller deletes: the deleted object's file, none for a rename.
	// Retiring a retired id again changes nothing and returns "".
	RetireObject(ctx context.Context, accountID, id, renamedTo string) (fileID string, err error)
}

// ObjectState is what became of an object id of an account.
type ObjectState struct {
	// Issued reports that the account's counter handed the id out.
	Issued bool
	// Retired reports that the object was deleted, or folded into a
	// document as the element RenamedTo.
	Retired   bool
	RenamedTo string
	// FileID is the stored file of the object's current version, if the
	// store knows one.
	FileID string
}
