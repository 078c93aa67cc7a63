package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/translator"
)

// gathered returns reg's metric family called name, or nil.
func gathered(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// labelled returns the metric of f whose labels are exactly want, or nil.
func labelled(f *dto.MetricFamily, want map[string]string) *dto.Metric {
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

func TestToolMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := New().Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveTool("web_search", translator.ToolOutcomeDone, 1500*time.Millisecond)
	m.ObserveTool("web_search", translator.ToolOutcomeDone, 250*time.Millisecond)
	m.ObserveTool("web_search", translator.ToolOutcomeTimeout, 2*time.Minute)
	m.ObserveTool(translator.ToolUnknown, translator.ToolOutcomeFailed, 0)

	runs := gathered(t, reg, "switchyard_tool_runs_total")
	if runs == nil {
		t.Fatal("switchyard_tool_runs_total not registered")
	}
	for _, tt := range []struct {
		name          string
		tool, outcome string
		want          float64
	}{
		{name: "done", tool: "web_search", outcome: "done", want: 2},
		{name: "timeout", tool: "web_search", outcome: "timeout", want: 1},
		{name: "unknown tool", tool: "unknown", outcome: "failed", want: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := labelled(runs, map[string]string{"tool": tt.tool, "outcome": tt.outcome})
			if s == nil {
				t.Fatalf("no series for tool=%s outcome=%s", tt.tool, tt.outcome)
			}
			if got := s.GetCounter().GetValue(); got != tt.want {
				t.Errorf("count %v, want %v", got, tt.want)
			}
		})
	}

	durations := gathered(t, reg, "switchyard_tool_duration_seconds")
	if durations == nil {
		t.Fatal("switchyard_tool_duration_seconds not registered")
	}
	h := labelled(durations, map[string]string{"tool": "web_search"}).GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 121.75 {
		t.Errorf("web_search durations: count %d sum %v, want 3 and 121.75", h.GetSampleCount(), h.GetSampleSum())
	}
}

// TestMetricsSurviveReload: a second config's registry gets the same
// collectors, so counts carry on rather than start over.
func TestMetricsSurviveReload(t *testing.T) {
	process := New()
	first, err := process.Register(prometheus.NewPedanticRegistry())
	if err != nil {
		t.Fatal(err)
	}
	first.ObserveTool("create_chart", translator.ToolOutcomeDone, time.Second)

	reg := prometheus.NewPedanticRegistry()
	second, err := process.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := process.Register(reg); err != nil {
		t.Fatalf("registering twice on one registry: %v", err)
	}
	second.ObserveTool("create_chart", translator.ToolOutcomeDone, time.Second)
	s := labelled(gathered(t, reg, "switchyard_tool_runs_total"), map[string]string{"tool": "create_chart", "outcome": "done"})
	if got := s.GetCounter().GetValue(); got != 2 {
		t.Errorf("count after reload %v, want 2", got)
	}
}

func TestQueueWaitingGauge(t *testing.T) {
	q, err := limits.NewQueue(limits.QueueConfig{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	if err := RegisterQueueGauge(reg, q); err != nil {
		t.Fatal(err)
	}
	if err := RegisterQueueGauge(reg, q); err != nil {
		t.Fatalf("registering twice on one registry: %v", err)
	}
	waiting := func() float64 {
		t.Helper()
		f := gathered(t, reg, "switchyard_queue_waiting")
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("switchyard_queue_waiting: %v", f)
		}
		return f.GetMetric()[0].GetGauge().GetValue()
	}

	if got := waiting(); got != 0 {
		t.Errorf("empty queue: %v waiting", got)
	}
	held, err := q.Enter(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	ctx, cancel := context.WithCancel(context.Background())
	inLine := make(chan struct{}, 1)
	done := make(chan error)
	go func() {
		lease, err := q.Enter(ctx, func(int) {
			select {
			case inLine <- struct{}{}:
			default:
			}
		})
		if lease != nil {
			lease.Release()
		}
		done <- err
	}()
	<-inLine
	if got := waiting(); got != 1 {
		t.Errorf("one request in line: %v waiting", got)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled wait was admitted")
	}
	if got := waiting(); got != 0 {
		t.Errorf("after the wait ended: %v waiting", got)
	}
}
