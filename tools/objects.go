package tools

import (
	"context"
	"strconv"
	"strings"
)

// ObjectClass is the class of an object id: a final deliverable (obj<N>)
// or an element inside one (el<N>).
type ObjectClass uint8

const (
	Final   ObjectClass = iota // obj<N>
	Element                    // el<N>
)

func (c ObjectClass) prefix() string {
	if c == Element {
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
		c, digits = Final, id[len("obj"):]
	case strings.HasPrefix(id, "el"):
		c, digits = Element, id[len("el"):]
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

// IDAllocator hands out object ids. Ids come from a per-account counter
// kept by the store, so that an id is never handed out twice, even to a
// client that sends no objects map and so cannot tell which ids it saw.
type IDAllocator interface {
	// NextObjectID returns a new id of class c for the account.
	NextObjectID(ctx context.Context, accountID string, c ObjectClass) (string, error)
}
