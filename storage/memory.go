package storage

import "context"

// Memory keeps facts about the end users of an account, for the
// assistant's per-end-user memory.
type Memory interface {
	// Facts returns the facts kept for the end user of the account,
	// oldest first. No facts is an empty list, not an error.
	Facts(ctx context.Context, accountID, endUserID string) ([]string, error)
	// Remember appends a fact and then, in the same atomic step, drops
	// the oldest facts so that at most max remain. A fact equal to one
	// already kept becomes the newest instead of being kept twice.
	Remember(ctx context.Context, accountID, endUserID, fact string, max int) error
}
