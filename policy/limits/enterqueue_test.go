package limits

import (
	"context"
	"testing"
	"time"
)

func TestEnterQueue(t *testing.T) {
	release, err := EnterQueue(context.Background(), nil, nil)
	if err != nil || release == nil {
		t.Fatalf("no queue: %v", err)
	}
	release()

	q := newTestQueue(t, QueueConfig{Limit: 1, MaxWaiting: 1, MaxWait: time.Minute})
	release, err = EnterQueue(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The one slot is taken: a request whose context is already done
	// gets the client's answer, not the queue's own error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := EnterQueue(ctx, q, nil); err == nil {
		t.Error("entered a full queue with a done context")
	} else if e := APIError(err); e.Status == 0 {
		t.Errorf("error %v is no API error", err)
	}
	release()
	again, err := EnterQueue(context.Background(), q, nil)
	if err != nil {
		t.Fatalf("the released slot is not free: %v", err)
	}
	again()
}
