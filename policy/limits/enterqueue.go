package limits

import "context"

// EnterQueue waits for one of q's slots for a generation, telling
// onPosition, when set, its place in line, and returns the function that
// gives the slot back; a nil q caps nothing. The error is the client's
// answer (APIError).
func EnterQueue(ctx context.Context, q *Queue, onPosition func(int)) (release func(), err error) {
	if q == nil {
		return func() {}, nil
	}
	slot, err := q.Enter(ctx, onPosition)
	if err != nil {
		return nil, APIError(err)
	}
	return slot.Release, nil
}
