package translator

import (
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/internal/testupstream"
)

// TestHeartbeatPanicEndsOnlyTheHeartbeat: a stream's heartbeat that
// panics (here its ticker, as it stops) is recovered and counted; the
// answer is complete and recorded for billing.
func TestHeartbeatPanicEndsOnlyTheHeartbeat(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.orch.cfg.NewTicker = func(time.Duration) (<-chan time.Time, func()) {
		return h.ticks, func() { panic("ticker bug") }
	}
	before := guard.Count(heartbeatGoroutine)
	h.up.Enqueue(testupstream.Text("All good."))
	r := h.do(chatBody(true, "Hi.", ""), withUser(nil))
	f := checkStream(t, r.body, true, true)
	if f.content != "All good." {
		t.Errorf("content %q", f.content)
	}
	if n := len(h.recorder.all()); n != 1 {
		t.Errorf("%d usage records, want 1", n)
	}
	// The heartbeat is marked stopped as its panic unwinds, just before
	// the panic is counted.
	for deadline := time.Now().Add(5 * time.Second); guard.Count(heartbeatGoroutine)-before != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeat panics counted, want 1", guard.Count(heartbeatGoroutine)-before)
		}
	}
}
