package translator

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/tools"
)

// observed is one report to Config.ToolObserver.
type observed struct {
	tool, outcome string
}

// toolLog collects what Config.ToolObserver is told.
type toolLog struct {
	mu       sync.Mutex
	got      []observed
	negative int // reports of a negative duration
}

func (l *toolLog) observe(tool, outcome string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d < 0 {
		l.negative++
	}
	l.got = append(l.got, observed{tool, outcome})
}

func (l *toolLog) all() ([]observed, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got), l.negative
}

func TestToolObserver(t *testing.T) {
	search := func(run func(ctx context.Context) (tools.Result, error)) registeredTool {
		return registeredTool{tools.WebSearch, &fakeTool{name: tools.NameWebSearch, run: func(ctx context.Context, _ tools.Call) (tools.Result, error) {
			return run(ctx)
		}}}
	}
	ok := search(func(context.Context) (tools.Result, error) { return tools.Result{Content: "found"}, nil })
	broken := search(func(context.Context) (tools.Result, error) { return tools.Result{}, errors.New("search backend down") })
	hanging := search(func(ctx context.Context) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	})

	tests := []struct {
		name        string
		tool        registeredTool
		calls       []demobackend.ToolCall
		toolTimeout time.Duration
		want        []observed
	}{
		{
			name:  "done",
			tool:  ok,
			calls: []demobackend.ToolCall{searchCall},
			want:  []observed{{tools.NameWebSearch, ToolOutcomeDone}},
		},
		{
			name:  "tool error",
			tool:  broken,
			calls: []demobackend.ToolCall{searchCall},
			want:  []observed{{tools.NameWebSearch, ToolOutcomeFailed}},
		},
		{
			name:  "arguments not JSON",
			tool:  ok,
			calls: []demobackend.ToolCall{{Name: tools.NameWebSearch, Arguments: `{"query":`}},
			want:  []observed{{tools.NameWebSearch, ToolOutcomeFailed}},
		},
		{
			name:  "tool not offered is unknown",
			tool:  ok,
			calls: []demobackend.ToolCall{{Name: "format_disk", Arguments: `{}`}},
			want:  []observed{{ToolUnknown, ToolOutcomeFailed}},
		},
		{
			name:        "timeout",
			tool:        hanging,
			calls:       []demobackend.ToolCall{searchCall},
			toolTimeout: time.Millisecond,
			want:        []observed{{tools.NameWebSearch, ToolOutcomeTimeout}},
		},
		{
			name:  "one report per call",
			tool:  ok,
			calls: []demobackend.ToolCall{searchCall, {Name: "format_disk", Arguments: `{}`}, searchCall},
			want: []observed{
				{tools.NameWebSearch, ToolOutcomeDone},
				{ToolUnknown, ToolOutcomeFailed},
				{tools.NameWebSearch, ToolOutcomeDone},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{tools: []registeredTool{tt.tool}})
			var log toolLog
			h.orch.cfg.ToolObserver = log.observe
			if tt.toolTimeout > 0 {
				h.orch.cfg.ToolTimeout = tt.toolTimeout
			}
			h.up.Enqueue(testupstream.ToolCalls(tt.calls...), testupstream.Text("Done."))
			r := h.do(chatBody(false, "Search something.", ""), withUser(nil))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			got, negative := log.all()
			if !slices.Equal(got, tt.want) {
				t.Errorf("observed %v, want %v", got, tt.want)
			}
			if negative > 0 {
				t.Errorf("%d calls reported a negative duration", negative)
			}
		})
	}
}

// TestToolObserverNil: without an observer tool calls run as before.
func TestToolObserverNil(t *testing.T) {
	h := newHarness(t, harnessOptions{tools: []registeredTool{nopTool(tools.NameWebSearch, tools.WebSearch)}})
	h.up.Enqueue(testupstream.ToolCalls(searchCall), testupstream.Text("Done."))
	if r := h.do(chatBody(false, "Search something.", ""), withUser(nil)); r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
}
