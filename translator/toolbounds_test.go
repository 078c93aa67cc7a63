package translator

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/tools"
)

// outcomes records what ToolObserver is told.
type outcomes struct {
	mu   sync.Mutex
	seen []string
}

func (o *outcomes) observe(tool, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, tool+":"+outcome)
}

func (o *outcomes) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

// TestToolCallsPerRoundAreCapped has the backend ask for five calls in
// one answer under a cap of two: the first two run, in order, and the
// other three are answered to the model as errors without running, so
// that the next round still carries an answer for every call.
func TestToolCallsPerRoundAreCapped(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	tool := &fakeTool{name: tools.NameOpenURL, run: func(_ context.Context, c tools.Call) (tools.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, c.ID)
		return tools.Result{Content: "page " + c.ID}, nil
	}}
	obs := &outcomes{}
	h := newHarness(t, harnessOptions{
		tools:        []registeredTool{{tools.Always, tool}},
		maxToolCalls: 2,
		observer:     obs.observe,
	})
	var calls []demobackend.ToolCall
	for i := 1; i <= 5; i++ {
		calls = append(calls, demobackend.ToolCall{ID: fmt.Sprintf("c%d", i), Name: tools.NameOpenURL,
			Arguments: fmt.Sprintf(`{"url":"https://example.com/%d"}`, i)})
	}
	h.up.Enqueue(testupstream.ToolCalls(calls...), testupstream.Text("done"))
	for _, stream := range []bool{false, true} {
		ran, obs.seen = nil, nil
		if stream {
			h.up.Enqueue(testupstream.ToolCalls(calls...), testupstream.Text("done"))
		}
		r := h.do(chatBody(stream, "read five pages", ""), nil)
		if r.status != http.StatusOK {
			t.Fatalf("stream %v: status %d: %s", stream, r.status, r.body)
		}
		if !slices.Equal(ran, []string{"c1", "c2"}) {
			t.Errorf("stream %v: ran %v, want the first two calls", stream, ran)
		}
		reqs := h.up.ChatRequests()
		msgs := reqs[len(reqs)-1].Messages
		if len(msgs) < 5 {
			t.Fatalf("stream %v: %d messages in the second round", stream, len(msgs))
		}
		answers := msgs[len(msgs)-5:]
		for i, m := range answers {
			id := fmt.Sprintf("c%d", i+1)
			if m.Role != "tool" || m.ToolCallID != id {
				t.Errorf("stream %v: message %d is %s for %q, want the tool answer to %s", stream, i, m.Role, m.ToolCallID, id)
				continue
			}
			refused := strings.Contains(m.Text(), "not run")
			if want := i >= 2; refused != want {
				t.Errorf("stream %v: answer to %s is %q; refused %v, want %v", stream, id, m.Text(), refused, want)
			}
		}
		want := []string{"open_url:done", "open_url:done", "open_url:refused", "open_url:refused", "open_url:refused"}
		if got := obs.all(); !slices.Equal(got, want) {
			t.Errorf("stream %v: observed %v, want %v", stream, got, want)
		}
		recs := h.recorder.all()
		if n := recs[len(recs)-1].ToolCalls; n != 2 {
			t.Errorf("stream %v: usage record counts %d tool calls, want the 2 that ran", stream, n)
		}
		if n := strings.Count(r.body, `"op":"start","kind":"tool"`); stream && n != 2 {
			t.Errorf("the client saw %d tool activities start, want the 2 that ran:\n%s", n, r.body)
		}
	}
}

// blockingRender is a file-output tool whose calls wait until released
// and which records how many run at once, per account.
type blockingRender struct {
	// stubborn calls keep running when their context ends, until
	// released: a slot that stays taken for as long as the test wants.
	stubborn bool

	mu       sync.Mutex
	running  map[string]int
	most     map[string]int
	started  chan string
	released chan struct{}
}

func newBlockingRender() *blockingRender {
	return &blockingRender{running: map[string]int{}, most: map[string]int{}, started: make(chan string, 16), released: make(chan struct{})}
}

func (b *blockingRender) tool() tools.Tool {
	return &fakeTool{name: tools.NameCreateDiagram, run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		acct := c.Env.AccountID
		b.mu.Lock()
		b.running[acct]++
		b.most[acct] = max(b.most[acct], b.running[acct])
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.running[acct]--
			b.mu.Unlock()
		}()
		b.started <- acct
		done := ctx.Done()
		if b.stubborn {
			done = nil
		}
		select {
		case <-b.released:
			return tools.Result{Content: "drawn"}, nil
		case <-done:
			return tools.Result{}, ctx.Err()
		}
	}}
}

func (b *blockingRender) peak(acct string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most[acct]
}

// diagramCall answers every request with one create_diagram call, then
// the text of its result.
func diagramCalls(h *harness) {
	h.up.Respond(func(req *demobackend.Request) (demobackend.Reply, bool) {
		msgs := req.Chat.Messages
		if len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool" {
			return testupstream.Text(msgs[len(msgs)-1].Text()), true
		}
		return testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameCreateDiagram,
			Arguments: `{"title":"t","source":"digraph { a -> b }","language":"dot"}`}), true
	})
}

// TestRenderConcurrencyPerAccount runs three requests of one account and
// one of another at once, each calling a render that waits to be
// released, under a bound of one render per account: the account's
// renders run one at a time, the other account's is not held up behind
// them, and every request finishes.
func TestRenderConcurrencyPerAccount(t *testing.T) {
	r := newBlockingRender()
	h := newHarness(t, harnessOptions{
		tools:             []registeredTool{{tools.FileOutput, r.tool()}},
		renderConcurrency: 1,
		toolTimeout:       time.Minute,
	})
	diagramCalls(h)
	var wg sync.WaitGroup
	results := make(chan result, 4)
	for _, acct := range []string{"acct1", "acct1", "acct1", "acct2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- h.doAs(context.Background(), acct, nil, chatBody(false, "draw", ""), nil)
		}()
	}
	// One render of acct1 and the one of acct2 start; the others of
	// acct1 wait for their account's turn.
	got := []string{<-r.started, <-r.started}
	slices.Sort(got)
	if !slices.Equal(got, []string{"acct1", "acct2"}) {
		t.Fatalf("first renders to start: %v, want one per account", got)
	}
	select {
	case acct := <-r.started:
		t.Fatalf("a second render of %s started while the bound is one", acct)
	case <-time.After(200 * time.Millisecond):
	}
	close(r.released)
	wg.Wait()
	close(results)
	for res := range results {
		if res.status != http.StatusOK || !strings.Contains(res.body, "drawn") {
			t.Errorf("status %d: %s", res.status, res.body)
		}
	}
	if p := r.peak("acct1"); p != 1 {
		t.Errorf("acct1 ran %d renders at once, want 1", p)
	}
	if n := h.orch.renders.accounts(); n != 0 {
		t.Errorf("%d accounts still hold render slots after every request ended", n)
	}
}

// TestRenderWaitEndsWithTheToolTimeout checks that a render waiting for
// its account's turn gives up when the call's time is up, tells the
// model why, and that a waiter leaves no slot behind.
func TestRenderWaitEndsWithTheToolTimeout(t *testing.T) {
	r := newBlockingRender()
	r.stubborn = true
	obs := &outcomes{}
	h := newHarness(t, harnessOptions{
		tools:             []registeredTool{{tools.FileOutput, r.tool()}},
		renderConcurrency: 1,
		toolTimeout:       300 * time.Millisecond,
		observer:          obs.observe,
	})
	diagramCalls(h)
	first := make(chan result, 1)
	go func() { first <- h.do(chatBody(false, "draw", ""), nil) }()
	<-r.started
	second := h.do(chatBody(false, "draw again", ""), nil)
	if second.status != http.StatusOK || !strings.Contains(second.body, "renders running") {
		t.Errorf("the waiting call's answer: status %d: %s", second.status, second.body)
	}
	close(r.released)
	if got := <-first; got.status != http.StatusOK {
		t.Errorf("the first request: status %d: %s", got.status, got.body)
	}
	if got := obs.all(); !slices.Contains(got, "create_diagram:timeout") {
		t.Errorf("observed %v, want a timeout", got)
	}
	if n := h.orch.renders.accounts(); n != 0 {
		t.Errorf("%d accounts still hold render slots", n)
	}
}

// TestOtherToolsAreNotBoundByRenders checks that a tool that renders
// nothing runs while the account's render slots are all taken.
func TestOtherToolsAreNotBoundByRenders(t *testing.T) {
	r := newBlockingRender()
	search := &fakeTool{name: tools.NameWebSearch, run: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Content: "found"}, nil
	}}
	h := newHarness(t, harnessOptions{
		tools:             []registeredTool{{tools.FileOutput, r.tool()}, {tools.WebSearch, search}},
		renderConcurrency: 1,
		toolTimeout:       time.Minute,
	})
	h.up.Respond(func(req *demobackend.Request) (demobackend.Reply, bool) {
		msgs := req.Chat.Messages
		if len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool" {
			return testupstream.Text(msgs[len(msgs)-1].Text()), true
		}
		if strings.Contains(msgs[len(msgs)-1].Text(), "search") {
			return testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameWebSearch, Arguments: `{"query":"q"}`}), true
		}
		return testupstream.ToolCalls(demobackend.ToolCall{Name: tools.NameCreateDiagram,
			Arguments: `{"title":"t","source":"digraph { a -> b }","language":"dot"}`}), true
	})
	first := make(chan result, 1)
	go func() { first <- h.do(chatBody(false, "draw", ""), nil) }()
	<-r.started
	got := h.do(chatBody(false, "search", ""), nil)
	if got.status != http.StatusOK || !strings.Contains(got.body, "found") {
		t.Errorf("search while a render runs: status %d: %s", got.status, got.body)
	}
	close(r.released)
	<-first
}
