package caddymodules

import (
	"strings"
	"testing"

	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/translator"
)

func TestProfileOverrides(t *testing.T) {
	t.Setenv(node.EnvRevision, "")
	zero, twoK := 0, 2000
	cents := int64(0)
	tests := []struct {
		name  string
		app   App
		check func(p policy.Profile) bool
	}{
		{"revision B defaults", App{}, func(p policy.Profile) bool {
			return p.RequestsPerPeriod == 60 && p.Rolling && p.ConcurrentStreams == 5 && p.MaxUploadBytes == 25_000_000 &&
				p.MaxStoredBytes == 500_000_000 && p.MaxInlineImage == 10_000_000 && p.MaxSystemChars == 2000 && p.MaxChargeCents == 500 && p.UsageAlways
		}},
		{"revision A defaults", App{Config: node.Config{Revision: "A"}}, func(p policy.Profile) bool {
			return p.RequestsPerPeriod == 150 && p.Rolling && p.ConcurrentStreams == 34 && p.MaxUploadBytes == 25<<20 &&
				p.MaxStoredBytes == 500<<20 && p.MaxInlineImage == 10<<20 && p.MaxSystemChars == 0 && p.MaxChargeCents == 0 && !p.UsageAlways
		}},
		{"overrides on A", App{Config: node.Config{Revision: "A"}, Limits: &limits.Config{Requests: 10, Streams: 2, Rolling: ptr(false), MaxSystemChars: &twoK, MaxUploadBytes: 1}},
			func(p policy.Profile) bool {
				return p.RequestsPerPeriod == 10 && !p.Rolling && p.ConcurrentStreams == 2 && p.MaxSystemChars == 2000 && p.MaxUploadBytes == 1 && p.MaxStoredFiles == 100
			}},
		{"explicit zeros on B", App{Limits: &limits.Config{MaxSystemChars: &zero, MaxChargeCents: &cents}}, func(p policy.Profile) bool {
			return p.MaxSystemChars == 0 && p.MaxChargeCents == 0 && p.RequestsPerPeriod == 60
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.app.resolve()
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s.Profile) {
				t.Errorf("profile %+v", s.Profile)
			}
		})
	}
}

func TestHandlersValidate(t *testing.T) {
	tests := []struct {
		name string
		v    interface{ Validate() error }
		ok   bool
	}{
		{name: "chat defaults", v: &Chat{}, ok: true},
		{name: "chat negative rounds", v: &Chat{MaxRounds: -1}},
		{name: "chat negative timeout", v: &Chat{IdleTimeout: -1}},
		{name: "files prefix", v: &Files{Prefix: "/v3"}, ok: true},
		{name: "files prefix without slash", v: &Files{Prefix: "v3"}},
		{name: "proxy prefix with trailing slash", v: &Proxy{Prefix: "/v1/"}},
		{name: "tools bounds", v: &App{Tools: &translator.ToolSettings{MaxToolCalls: 3, RenderConcurrency: 1}}, ok: true},
		{name: "tools negative calls", v: &App{Tools: &translator.ToolSettings{MaxToolCalls: -1}}},
		{name: "tools negative concurrency", v: &App{Tools: &translator.ToolSettings{RenderConcurrency: -1}}},
		{name: "short key secret", v: &App{KeySecret: "short"}},
		{name: "key secret placeholder", v: &App{KeySecret: "{env.KEY}"}, ok: true},
		{name: "key secret", v: &App{KeySecret: strings.Repeat("k", 32)}, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.v.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
