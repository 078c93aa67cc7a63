package limits

import (
	"strings"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
)

// An account's share of body memory is a quarter of the node's, but
// never less than one body of the largest size nor more than the whole.
func TestConfigAccountBodyMemory(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    *Config
		want int64
	}{
		{"defaults", nil, DefaultBodyMemory / 4},
		{"a quarter", &Config{BodyMemory: 400 << 20}, 100 << 20},
		{"at least one body", &Config{BodyMemory: 64 << 20}, DefaultMaxBodyBytes},
		{"no more than the whole", &Config{BodyMemory: 16 << 20}, 16 << 20},
		{"configured", &Config{AccountBodyMemory: 8 << 20}, 8 << 20},
		{"configured above the whole", &Config{BodyMemory: 8 << 20, AccountBodyMemory: 9 << 20}, 8 << 20},
	} {
		if got := tt.c.accountBodyMemory(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestConfigAuthFailureLimit(t *testing.T) {
	off := 0
	if n, p := (*Config)(nil).AuthFailureLimit(); n != DefaultAuthFailures || p != DefaultAuthFailuresPeriod {
		t.Errorf("defaults: %d per %v", n, p)
	}
	if n, _ := (&Config{AuthFailures: &off}).AuthFailureLimit(); n != 0 {
		t.Errorf("off: %d", n)
	}
	if _, p := (&Config{AuthFailuresPeriod: 5_000_000_000}).AuthFailureLimit(); p != 5*time.Second {
		t.Errorf("period: %v", p)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		c    Config
		want string
	}{
		{Config{RatePolicy: "fail_sideways"}, `unknown Redis failure policy "fail_sideways"`},
		{Config{BodyTimeout: -1}, "must not be negative"},
		{Config{Queue: &QueueSettings{}}, "queue: slots must be positive"},
		{Config{Prices: map[string]policy.ModelPrice{"": {}}}, `prices: ""`},
	} {
		if err := tt.c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.c, err, tt.want)
		}
	}
	if err := (&Config{RatePolicy: "fail_closed", Queue: &QueueSettings{Slots: 1}}).Validate(); err != nil {
		t.Errorf("a valid config: %v", err)
	}
}

// Apply overrides what is set and keeps the revision's values for the rest.
func TestConfigApply(t *testing.T) {
	p := policy.ProfileFor(policy.RevisionB)
	want := p
	rolling := false
	(&Config{Requests: 10, Rolling: &rolling}).Apply(&p)
	want.RequestsPerPeriod, want.Rolling = 10, false
	if p.RequestsPerPeriod != want.RequestsPerPeriod || p.Rolling != want.Rolling || p.ConcurrentStreams != want.ConcurrentStreams || p.Period != want.Period {
		t.Errorf("Apply: %+v", p)
	}
}
