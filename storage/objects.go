package storage

import (
	"context"
	"strconv"
	"strings"
)

// Object ids of the /v3 deliverables (spec 2.4).

// ObjectClass is the class of an object id: a final deliverable (obj<N>)
// or an element inside one (el<N>).
type ObjectClass uint8

const (
	ObjectFinal   ObjectClass = iota // obj<N>
	ObjectElement                    // el<N>
)

func (c ObjectClass) prefix() string {
	if c == ObjectElement {
		return "el"
	}
	return "obj"
}

// ObjectID formats the id of class c with number n (n > 0).
func ObjectID(c ObjectClass, n int64) string {
	return c.prefix() + strconv.FormatInt(n, 10)
}

// ParseObjectID splits an id of the form obj<N> or el<N>, N a positive
// integer without leading zeros, so that every object has exactly one
// spelling.
func ParseObjectID(id string) (ObjectClass, int64, bool) {
	var c ObjectClass
	var digits string
	switch {
	case strings.HasPrefix(id, "obj"):
		c, digits = ObjectFinal, id[len("obj"):]
	case strings.HasPrefix(id, "el"):
		c, digits = ObjectElement, id[len("el"):]
	default:
		return 0, 0, false
	}
	if digits == "" || digits[0] == '0' || len(digits) > 18 {
		return 0, 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return c, n, true
}

// ObjectIDs hands out object ids. Ids come from a per-account counter
// kept by the store, so that an id is never handed out twice, even to a
// client that sends no objects map and so cannot tell which ids it saw.
type ObjectIDs interface {
	// NextObjectID returns a new id of class c for the account:
	// obj1, obj2, ... for finals, el1, el2, ... for elements. Deleted
	// accounts still count. ErrNotFound if the account never existed.
	NextObjectID(ctx context.Context, accountID string, c ObjectClass) (string, error)
}
