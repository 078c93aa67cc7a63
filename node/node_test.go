package node

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// expandEnv replaces {env.NAME} as Caddy's global placeholders do.
func expandEnv(s string) string {
	return envPlaceholder.ReplaceAllStringFunc(s, func(p string) string { return os.Getenv(p[len("{env.") : len(p)-1]) })
}

var envPlaceholder = regexp.MustCompile(`\{env\.[A-Za-z0-9_]+\}`)

func TestResolve(t *testing.T) {
	t.Setenv(EnvRevision, "a")
	t.Setenv(EnvDataDir, "/srv/data")
	t.Setenv(EnvUpstream, "http://10.0.0.5:8000/v1/")
	t.Setenv(EnvUpstreamKey, "from-env")
	t.Setenv(EnvPostgres, "")
	t.Setenv("CUSTOM_MODEL", "llama-3")

	s, err := Resolve(Config{}, "", Upstream{Model: "{env.CUSTOM_MODEL}"}, expandEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile.Revision != policy.RevisionA || s.Profile.ConcurrentStreams != 34 {
		t.Errorf("profile %+v, want revision A", s.Profile)
	}
	if s.DataDir != "/srv/data" || !s.Embedded() || s.StoreKey() != "sqlite:/srv/data/switchyard.db" {
		t.Errorf("data dir %q, store key %q", s.DataDir, s.StoreKey())
	}
	if s.Upstream.String() != "http://10.0.0.5:8000/v1" || s.UpstreamKey != "from-env" || s.UpstreamModel != "llama-3" {
		t.Errorf("upstream %v key %q model %q", s.Upstream, s.UpstreamKey, s.UpstreamModel)
	}

	// Configured values win over the environment.
	s, err = Resolve(Config{Revision: "B", DataDir: "rel", Postgres: "postgres://db/x"}, "", Upstream{}, expandEnv)
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile.Revision != policy.RevisionB || !filepath.IsAbs(s.DataDir) || s.Embedded() || s.StoreKey() != "postgres:postgres://db/x" {
		t.Errorf("got %+v", s)
	}
}

func TestResolveRefuses(t *testing.T) {
	t.Setenv(EnvUpstream, "")
	tests := []struct {
		name string
		cfg  Config
		up   Upstream
		want string
	}{
		{"revision", Config{Revision: "C"}, Upstream{}, "unknown spec revision"},
		{"upstream scheme", Config{}, Upstream{URL: "ftp://x/v1"}, "http(s) base URL"},
		{"upstream without host", Config{}, Upstream{URL: "http:///v1"}, "http(s) base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(tt.cfg, "", tt.up, expandEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestKeySecret(t *testing.T) {
	t.Run("postgres needs one", func(t *testing.T) {
		s := Settings{Postgres: "postgres://db/x"}
		if err := s.LoadKeySecret(); err == nil || !strings.Contains(err.Error(), EnvKeySecret) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too short", func(t *testing.T) {
		s := Settings{KeySecret: []byte("short")}
		if err := s.LoadKeySecret(); err == nil {
			t.Fatal("accepted a 5-byte secret")
		}
	})
	// A short secret is blamed on what set it: the config field, the
	// placeholder it holds, or the environment variable.
	for _, tt := range []struct{ configured, env, want, notWant string }{
		{configured: "short", env: strings.Repeat("e", 32), want: "key_secret must be", notWant: EnvKeySecret},
		{configured: "{env.SHORT_SECRET}", want: "key_secret ({env.SHORT_SECRET}) must be", notWant: EnvKeySecret},
		{env: "short", want: EnvKeySecret + " must be"},
	} {
		t.Run("too short from "+tt.want, func(t *testing.T) {
			t.Setenv("SHORT_SECRET", "short")
			t.Setenv(EnvKeySecret, tt.env)
			s, err := Resolve(Config{DataDir: t.TempDir()}, tt.configured, Upstream{}, expandEnv)
			if err != nil {
				t.Fatal(err)
			}
			err = s.LoadKeySecret()
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
				s := Settings{DataDir: dir}
				if err := s.LoadKeySecret(); err != nil {
					t.Error(err)
					return
				}
				secrets[i] = string(s.KeySecret)
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

func TestPoolKeys(t *testing.T) {
	local := Settings{}
	if local.LimiterKey(nil) != "local" {
		t.Errorf("in-process limiter key %q", local.LimiterKey(nil))
	}
	a := Settings{Redis: "redis://r:6379", RedisPrefix: "a:"}
	b := a
	b.RedisPrefix = "b:"
	if a.LimiterKey(nil) == b.LimiterKey(nil) {
		t.Error("two prefixes share one limiter")
	}
	if a.LimiterKey(nil) != a.LimiterKey(&limits.Config{}) {
		t.Error("no limits block and an empty one differ")
	}
	if a.LimiterKey(&limits.Config{Nodes: 3}) == a.LimiterKey(nil) {
		t.Error("a retuned limiter shares the old one")
	}
	if a.QueueKey(&limits.QueueSettings{Slots: 2}) == a.QueueKey(&limits.QueueSettings{Slots: 3}) {
		t.Error("two queue sizes share one queue")
	}
}

func TestKeyCacheTTL(t *testing.T) {
	for configured, want := range map[time.Duration]time.Duration{0: DefaultKeyCacheTTL, -1: 0, 5 * time.Second: 5 * time.Second} {
		if got := KeyCacheTTL(configured); got != want {
			t.Errorf("KeyCacheTTL(%v) = %v, want %v", configured, got, want)
		}
	}
}
