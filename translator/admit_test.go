package translator

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/translator/request"
)

// queueAt returns an Admit that reports the given places in line, moving
// the clock by step before each, then admits.
func queueAt(h **harness, step time.Duration, positions ...int) func(context.Context, func(int)) (func(), error) {
	return func(ctx context.Context, onPosition func(int)) (func(), error) {
		for _, p := range positions {
			(*h).clock.Advance(step)
			if onPosition != nil {
				onPosition(p)
			}
		}
		return func() {}, nil
	}
}

func TestQueuePositionBeforeContent(t *testing.T) {
	var h *harness
	h = newHarness(t, harnessOptions{admit: queueAt(&h, 1100*time.Millisecond, 3, 2, 2, 1)})
	h.up.Enqueue(testupstream.Text("Your turn came."))
	r := h.do(chatBody(true, "Hello", ""), withUser(nil))
	f := checkStream(t, r.body, true, true)
	if f.content != "Your turn came." {
		t.Fatalf("content %q", f.content)
	}
	// 3, 2 and 1 each once (the repeated 2 is not news), all before the
	// first content.
	firstContent := strings.Index(r.body, `"content":"Your`)
	var positions []string
	for _, line := range strings.Split(r.body, "\n") {
		if i := strings.Index(line, `"queue_position":`); i >= 0 {
			if strings.Index(r.body, line) > firstContent {
				t.Errorf("queue_position after content: %s", line)
			}
			positions = append(positions, line[i+len(`"queue_position":`):i+len(`"queue_position":`)+1])
		}
	}
	if strings.Join(positions, ",") != "3,2,1" {
		t.Fatalf("queue positions %v, want 3,2,1:\n%s", positions, r.body)
	}
	if _, _, err := parseWithOpenAI(t, r.body); err != nil {
		t.Fatalf("openai-go: %v", err)
	}
}

func TestQueuePositionAtMostOncePerSecond(t *testing.T) {
	var h *harness
	h = newHarness(t, harnessOptions{admit: queueAt(&h, 300*time.Millisecond, 5, 4, 3, 2, 1)})
	h.up.Enqueue(testupstream.Text("Done."))
	r := h.do(chatBody(true, "Hello", ""), withUser(nil))
	if n := strings.Count(r.body, `"queue_position"`); n != 2 {
		t.Fatalf("%d queue_position chunks over 1.5s of waiting, want 2 (at 0s and after 1.2s):\n%s", n, r.body)
	}
}

func TestQueuePositionHiddenWithProgressOff(t *testing.T) {
	var h *harness
	h = newHarness(t, harnessOptions{admit: queueAt(&h, 2*time.Second, 2, 1)})
	h.up.Enqueue(testupstream.Text("Done."))
	r := h.do(chatBody(true, "Hello", ""), withUser(map[string]string{request.HeaderProgressStream: "0"}))
	f := checkStream(t, r.body, true, false)
	if strings.Contains(r.body, "queue_position") || f.content != "Done." {
		t.Fatalf("progress off:\n%s", r.body)
	}
}

func TestAdmissionRefused(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h := newHarness(t, harnessOptions{admit: func(context.Context, func(int)) (func(), error) {
			return nil, apierror.New(http.StatusServiceUnavailable, apierror.TypeServer, "server_overloaded", "Busy.")
		}})
		r := h.do(chatBody(stream, "Hello", ""), withUser(nil))
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "server_overloaded") {
			t.Fatalf("stream=%v: %d %s", stream, r.status, r.body)
		}
		if n := len(h.up.Requests()); n != 0 {
			t.Fatalf("stream=%v: a refused request reached the backend", stream)
		}
		if n := len(h.recorder.all()); n != 0 {
			t.Fatalf("stream=%v: a refused request was recorded for billing", stream)
		}
	}
}

func TestAdmissionReleased(t *testing.T) {
	released := 0
	h := newHarness(t, harnessOptions{admit: func(context.Context, func(int)) (func(), error) {
		return func() { released++ }, nil
	}})
	h.up.Enqueue(testupstream.Text("One."), testupstream.Text("Two."))
	h.do(chatBody(true, "Hello", ""), withUser(nil))
	h.do(chatBody(false, "Hello", ""), withUser(nil))
	if released != 2 {
		t.Fatalf("released %d times, want 2", released)
	}
}
