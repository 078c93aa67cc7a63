package caddymodules

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyardhq/switchyard/storage"
)

// TestChargeMetricsNeverDecrease: a charge with negative counts or a
// negative amount (a record the normalisation did not see, an amount the
// store answered with) adds nothing to the counters rather than making
// them panic, which on the ledger writer's goroutine ended the process.
func TestChargeMetricsNeverDecrease(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := newMetrics().register(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.countCharge(routeV3Chat, storage.UsageRecord{PromptTokens: 100, CompletionTokens: 20}, 7, nil)
	m.countCharge(routeV3Chat, storage.UsageRecord{PromptTokens: -5000, CompletionTokens: 3}, -40, nil)
	m.countCharge(routeV1, storage.UsageRecord{PromptTokens: -1, CompletionTokens: -1}, 0, errors.New("refused"))

	tokens := gathered(t, reg, "switchyard_tokens_total")
	for _, c := range []struct {
		route, kind string
		want        float64
	}{
		{routeV3Chat, "prompt", 100},
		{routeV3Chat, "completion", 23},
		{routeV1, "prompt", 0},
		{routeV1, "completion", 0},
	} {
		var got float64
		if s := labelled(tokens, map[string]string{"route": c.route, "kind": c.kind}); s != nil {
			got = s.GetCounter().GetValue()
		}
		if got != c.want {
			t.Errorf("tokens %s %s = %v, want %v", c.route, c.kind, got, c.want)
		}
	}
	cents := labelled(gathered(t, reg, "switchyard_charged_cents_total"), map[string]string{"route": routeV3Chat})
	if got := cents.GetCounter().GetValue(); got != 7 {
		t.Errorf("charged cents = %v, want 7: a negative amount adds nothing", got)
	}
	errs := labelled(gathered(t, reg, "switchyard_charge_errors_total"), map[string]string{"route": routeV1})
	if got := errs.GetCounter().GetValue(); got != 1 {
		t.Errorf("charge errors = %v, want 1", got)
	}
}
