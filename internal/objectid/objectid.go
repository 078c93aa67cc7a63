// Package objectid spells the ids of the /v3 deliverables (spec 2.4):
// obj<N> for a final deliverable, el<N> for an element inside one. The
// numbers come from a per-account counter the store keeps
// (storage.ObjectIDs), so that no id is handed out twice.
package objectid

import (
	"strconv"
	"strings"
)

// Class is the class of an object id.
type Class uint8

const (
	Final   Class = iota // obj<N>
	Element              // el<N>
)

func (c Class) prefix() string {
	if c == Element {
		return "el"
	}
	return "obj"
}

// Format spells the id of class c with number n (n > 0).
func Format(c Class, n int64) string {
	return c.prefix() + strconv.FormatInt(n, 10)
}

// Parse splits an id of the form obj<N> or el<N>, N a positive integer
// without leading zeros, so that every object has exactly one spelling.
func Parse(id string) (Class, int64, bool) {
	var c Class
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
