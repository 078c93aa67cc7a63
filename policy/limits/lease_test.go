package limits

import (
	"context"
	"testing"
	"time"
)

// countedReleaser counts the releases of its leases.
type countedReleaser chan struct{}

func (c countedReleaser) releaseLease(*Lease) { c <- struct{}{} }

// TestLeaseTiedToAnEndedContext: a lease tied to a context that has
// already ended is released at once, by the goroutine context.AfterFunc
// starts while tie is still setting the lease up (run with -race), and
// once.
func TestLeaseTiedToAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		released := make(countedReleaser, 2)
		l := new(Lease)
		l.init("k", "id", released)
		l.tie(ctx)
		select {
		case <-released:
		case <-time.After(5 * time.Second):
			t.Fatal("a lease tied to an ended context was not released")
		}
		l.Release()
		if len(released) != 0 {
			t.Fatal("the lease was released twice")
		}
	}
}
