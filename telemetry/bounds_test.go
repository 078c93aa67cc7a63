package telemetry

import (
	"errors"
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/storage"
)

// TestChargeMetricsNeverDecrease: a charge with negative counts or a
// negative amount (a record the normalisation did not see, an amount the
// store answered with) adds nothing to the counters rather than making
// them panic, which on the ledger writer's goroutine ended the process.
func TestChargeMetricsNeverDecrease(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := New().Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.CountCharge(RouteV3Chat, storage.UsageRecord{PromptTokens: 100, CompletionTokens: 20}, 7, nil)
	m.CountCharge(RouteV3Chat, storage.UsageRecord{PromptTokens: -5000, CompletionTokens: 3}, -40, nil)
	m.CountCharge(RouteV1, storage.UsageRecord{PromptTokens: -1, CompletionTokens: -1}, 0, errors.New("refused"))

	tokens := gathered(t, reg, "switchyard_tokens_total")
	for _, c := range []struct {
		route, kind string
		want        float64
	}{
		{RouteV3Chat, "prompt", 100},
		{RouteV3Chat, "completion", 23},
		{RouteV1, "prompt", 0},
		{RouteV1, "completion", 0},
	} {
		var got float64
		if s := labelled(tokens, map[string]string{"route": c.route, "kind": c.kind}); s != nil {
			got = s.GetCounter().GetValue()
		}
		if got != c.want {
			t.Errorf("tokens %s %s = %v, want %v", c.route, c.kind, got, c.want)
		}
	}
	cents := labelled(gathered(t, reg, "switchyard_charged_cents_total"), map[string]string{"route": RouteV3Chat})
	if got := cents.GetCounter().GetValue(); got != 7 {
		t.Errorf("charged cents = %v, want 7: a negative amount adds nothing", got)
	}
	errs := labelled(gathered(t, reg, "switchyard_charge_errors_total"), map[string]string{"route": RouteV1})
	if got := errs.GetCounter().GetValue(); got != 1 {
		t.Errorf("charge errors = %v, want 1", got)
	}
}

// neverPanicked is a goroutine name that no test panics on.
var neverPanicked = guard.Name("test_never_panicked")

// TestRecoveredPanicsAreExported: switchyard_panics_recovered_total has a
// series for every goroutine name, at zero before its first panic.
func TestRecoveredPanicsAreExported(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := New().Register(reg); err != nil {
		t.Fatal(err)
	}
	before := guard.Count("test_exported")
	_ = guard.Run("test_exported", func() { panic("test") })
	f := gathered(t, reg, "switchyard_panics_recovered_total")
	got := labelled(f, map[string]string{"goroutine": "test_exported"})
	if got.GetCounter().GetValue() != float64(before+1) {
		t.Errorf("test_exported = %v, want %d", got.GetCounter().GetValue(), before+1)
	}
	for _, name := range []string{"ledger_writer", "ledger_completions", "metrics_collector", neverPanicked} {
		if labelled(f, map[string]string{"goroutine": name}) == nil {
			t.Errorf("no series for %s before its first panic", name)
		}
	}
	// Registered twice on one registry, as a reload does: no error, one
	// series each.
	if _, err := New().Register(reg); err != nil {
		t.Fatal(err)
	}
}

// TestAPanickingCollectorDoesNotEndTheProcess: a gauge whose reading
// panics is scraped as NaN, and the panic is counted; the registry
// gathers on goroutines of its own, where an unrecovered panic would end
// the process.
func TestAPanickingCollectorDoesNotEndTheProcess(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	before := guard.Count(CollectorGoroutine)
	if err := RegisterGauge(reg, "test_panicking_gauge", "A gauge that panics.", func() float64 { panic("collector bug") }); err != nil {
		t.Fatal(err)
	}
	f := gathered(t, reg, "switchyard_test_panicking_gauge")
	if v := f.GetMetric()[0].GetGauge().GetValue(); !math.IsNaN(v) {
		t.Errorf("gauge = %v, want NaN", v)
	}
	if n := guard.Count(CollectorGoroutine) - before; n != 1 {
		t.Errorf("%d panics counted, want 1", n)
	}
}
