package translator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testenv"
	"github.com/switchyardhq/switchyard/translator/request"
)

// idleStreams is how many streams the idle-memory test holds open: enough
// that a few KiB per stream stand out of the process's own noise.
const idleStreams = 200

// inUse is the memory Go holds for live objects and goroutine stacks,
// after a collection.
func inUse() memInUse {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memInUse{heap: m.HeapInuse, stack: m.StackInuse}
}

type memInUse struct{ heap, stack uint64 }

// per is the growth from m to n per stream, in KiB: heap, stacks, both.
func (m memInUse) per(n memInUse, streams int) (heap, stack, total float64) {
	heap = (float64(n.heap) - float64(m.heap)) / float64(streams) / 1024
	stack = (float64(n.stack) - float64(m.stack)) / float64(streams) / 1024
	return heap, stack, heap + stack
}

// discardFlusher is a client that reads nothing: a stream's writes go
// nowhere and cost nothing to keep.
type discardFlusher struct{ h http.Header }

func (d *discardFlusher) Header() http.Header         { return d.h }
func (d *discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Flush()                      {}

// TestIdleStreamMemory measures what an open /v3 stream holds while its
// backend has not answered yet (the state most streams of a slow model
// are in), against a bare stream of the same upstream request: Go's
// heap and stack in use, after a collection, per stream. The bare
// stream (a goroutine waiting on an http.Client's response, the
// transport's connection goroutines and buffers, the backend's side of
// it) is what relaying the call costs anyway, as plain Caddy does; what
// the /v3 stream holds beyond it is the handler's state, its deeper
// stack and the orchestrator's goroutines.
func TestIdleStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens hundreds of connections")
	}
	if testenv.RaceEnabled {
		t.Skip("memory under the race detector is the detector's; make test runs this without it")
	}
	h := newHarness(t, harnessOptions{up: demobackend.Options{TimeToFirstToken: time.Hour}})
	body := chatBody(true, "Hold on.", "")
	parsed := func() *request.Request {
		r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", strings.NewReader(body))
		req, err := request.Parse([]byte(body), r.Header, request.Limits{Profile: h.profile})
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	// waitFor waits until the backend has seen n requests.
	waitFor := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); len(h.up.Requests()) < n; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the backend saw %d requests of %d", len(h.up.Requests()), n)
			}
		}
	}

	// One stream first: the upstream request the bare streams send is
	// the one the gateway sends, and the process's one-time set-up is
	// out of the way.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	open := func(n int) {
		for range n {
			r := httptest.NewRequest(http.MethodPost, "/v3/chat/completions", strings.NewReader(body)).WithContext(ctx)
			req := parsed()
			wg.Go(func() {
				h.orch.Serve(&discardFlusher{h: http.Header{}}, r, req, Caller{AccountID: "acct1", KeyID: "key1", RequestID: "req1"})
			})
		}
	}
	open(1)
	waitFor(1)
	upstreamBody := h.up.Requests()[0].Body
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: idleStreams}}
	defer client.CloseIdleConnections()
	bare := func(n int) {
		for range n {
			wg.Go(func() {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.up.URL()+"/chat/completions", strings.NewReader(string(upstreamBody)))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				if resp, err := client.Do(req); err == nil {
					resp.Body.Close()
				}
			})
		}
	}
	bare(1)
	waitFor(2)

	before, g0 := inUse(), runtime.NumGoroutine()
	bare(idleStreams)
	waitFor(2 + idleStreams)
	afterBare, g1 := inUse(), runtime.NumGoroutine()
	open(idleStreams)
	waitFor(2 + 2*idleStreams)
	afterV3, g2 := inUse(), runtime.NumGoroutine()
	t.Logf("goroutines per stream: bare %.1f, /v3 %.1f", float64(g1-g0)/idleStreams, float64(g2-g1)/idleStreams)
	bareHeap, bareStack, perBare := before.per(afterBare, idleStreams)
	v3Heap, v3Stack, perV3 := afterBare.per(afterV3, idleStreams)
	t.Logf("per idle stream, heap + stacks in use: bare upstream call %.1f + %.1f KiB, /v3 stream %.1f + %.1f KiB, /v3 over bare %+.1f KiB",
		bareHeap, bareStack, v3Heap, v3Stack, perV3-perBare)
	// The line is 8 KiB over the bare stream (docs/performance.md, "Memory
	// of an idle stream"), met with a few KiB to spare since the upstream
	// transport's buffers are 1 KiB (the bare stream's are 4 KiB); the
	// figure moves by a few KiB from run to run on a loaded machine. What
	// fails the test is a regression past twice the line, as a buffer of
	// the upstream reader's old 32 KiB or a goroutine more per stream
	// would make it.
	if over := perV3 - perBare; over > 16 {
		t.Errorf("an idle /v3 stream holds %.1f KiB more than a bare stream of its upstream call (%.1f against %.1f KiB): over twice the 8 KiB line",
			over, perV3, perBare)
	} else if over > 8 {
		t.Logf("the 8 KiB line is missed by %.1f KiB", over-8)
	}
	// Half a goroutine of slack for the process's own coming and going.
	if g := float64(g2-g1) / idleStreams; g > float64(g1-g0)/idleStreams+0.5 {
		t.Errorf("an idle /v3 stream runs %.1f goroutines, a bare stream of its upstream call %.1f", g, float64(g1-g0)/idleStreams)
	}
}
