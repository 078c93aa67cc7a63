package caddymodules

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/translator"
)

func TestResolve(t *testing.T) {
	t.Setenv(envRevision, "a")
	t.Setenv(envDataDir, "/srv/data")
	t.Setenv(envUpstream, "http://10.0.0.5:8000/v1/")
	t.Setenv(envUpstreamKey, "from-env")
	t.Setenv(envPostgres, "")
	t.Setenv("CUSTOM_MODEL", "llama-3")

	s, err := (&App{Upstream: Upstream{Model: "{env.CUSTOM_MODEL}"}}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s.profile.Revision != policy.RevisionA || s.profile.ConcurrentStreams != 34 {
		t.Errorf("profile %+v, want revision A", s.profile)
	}
	if s.dataDir != "/srv/data" || !s.embedded() || s.storeKey() != "sqlite:/srv/data/switchyard.db" {
		t.Errorf("data dir %q, store key %q", s.dataDir, s.storeKey())
	}
	if s.upstream.String() != "http://10.0.0.5:8000/v1" || s.upstreamKey != "from-env" || s.upstreamModel != "llama-3" {
		t.Errorf("upstream %v key %q model %q", s.upstream, s.upstreamKey, s.upstreamModel)
	}

	// Configured values win over the environment.
	s, err = (&App{Revision: "B", DataDir: "rel", Postgres: "postgres://db/x"}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s.profile.Revision != policy.RevisionB || !filepath.IsAbs(s.dataDir) || s.embedded() || s.storeKey() != "postgres:postgres://db/x" {
		t.Errorf("got %+v", s)
	}
}

func TestResolveRefuses(t *testing.T) {
	t.Setenv(envUpstream, "")
	tests := []struct {
		name string
		app  App
		want string
	}{
		{"revision", App{Revision: "C"}, "unknown spec revision"},
		{"upstream scheme", App{Upstream: Upstream{URL: "ftp://x/v1"}}, "http(s) base URL"},
		{"upstream without host", App{Upstream: Upstream{URL: "http:///v1"}}, "http(s) base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.app.resolve()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestKeySecret(t *testing.T) {
	t.Run("postgres needs one", func(t *testing.T) {
		s := settings{postgres: "postgres://db/x"}
		if err := s.loadKeySecret(); err == nil || !strings.Contains(err.Error(), envKeySecret) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too short", func(t *testing.T) {
		s := settings{keySecret: []byte("short")}
		if err := s.loadKeySecret(); err == nil {
			t.Fatal("accepted a 5-byte secret")
		}
	})
	// A short secret is blamed on what set it: the config field, the
	// placeholder it holds, or the environment variable.
	for _, tt := range []struct{ configured, env, want, notWant string }{
		{configured: "short", env: strings.Repeat("e", 32), want: "key_secret must be", notWant: envKeySecret},
		{configured: "{env.SHORT_SECRET}", want: "key_secret ({env.SHORT_SECRET}) must be", notWant: envKeySecret},
		{env: "short", want: envKeySecret + " must be"},
	} {
		t.Run("too short from "+tt.want, func(t *testing.T) {
			t.Setenv("SHORT_SECRET", "short")
			t.Setenv(envKeySecret, tt.env)
			s, err := (&App{KeySecret: tt.configured, DataDir: t.TempDir()}).resolve()
			if err != nil {
				t.Fatal(err)
			}
			err = s.loadKeySecret()
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.notWant != "" && strings.Contains(err.Error(), tt.notWant)) {
				t.Fatalf("err = %v, want it to name %q", err, tt.want)
			}
		})
	}
	t.Run("generated once, even by racing processes", func(t *testing.T) {
		dir := t.TempDir()
		secrets := make([]string, 16)
		var wg sync.WaitGroup
		for i := range secrets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := settings{dataDir: dir}
				if err := s.loadKeySecret(); err != nil {
					t.Error(err)
					return
				}
				secrets[i] = string(s.keySecret)
			}()
		}
		wg.Wait()
		for _, s := range secrets {
			if s != secrets[0] || len(s) < 32 {
				t.Fatalf("secrets differ or are short: %q", secrets)
			}
		}
	})
}

func TestProfileOverrides(t *testing.T) {
	t.Setenv(envRevision, "")
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
		{"revision A defaults", App{Revision: "A"}, func(p policy.Profile) bool {
			return p.RequestsPerPeriod == 150 && p.Rolling && p.ConcurrentStreams == 34 && p.MaxUploadBytes == 25<<20 &&
				p.MaxStoredBytes == 500<<20 && p.MaxInlineImage == 10<<20 && p.MaxSystemChars == 0 && p.MaxChargeCents == 0 && !p.UsageAlways
		}},
		{"overrides on A", App{Revision: "A", Limits: &limits.Config{Requests: 10, Streams: 2, Rolling: ptr(false), MaxSystemChars: &twoK, MaxUploadBytes: 1}},
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
			if !tt.check(s.profile) {
				t.Errorf("profile %+v", s.profile)
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
