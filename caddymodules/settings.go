package caddymodules

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"

	"github.com/switchyardhq/switchyard/internal/secrets"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/tools/search"
)

// The operator contract: environment variables read when the Caddyfile or
// JSON config leaves a setting empty. Caddyfile.example and the CLI rely on
// them, so their names and defaults are part of the public interface.
const (
	envRevision      = "SWITCHYARD_REVISION"
	envDataDir       = "SWITCHYARD_DATA_DIR"
	envPostgres      = "SWITCHYARD_POSTGRES_URL"
	envRedis         = "SWITCHYARD_REDIS_URL"
	envRedisPrefix   = "SWITCHYARD_REDIS_PREFIX"
	envRedisMode     = "SWITCHYARD_REDIS_MODE"
	envKeySecret     = "SWITCHYARD_KEY_SECRET"
	envUpstream      = "SWITCHYARD_UPSTREAM"
	envUpstreamKey   = "SWITCHYARD_UPSTREAM_API_KEY"
	envUpstreamModel = "SWITCHYARD_UPSTREAM_MODEL"

	defaultDataDir     = "./data"
	defaultRedisPrefix = "switchyard:"
	keySecretFile      = "key_secret"
	minKeySecretBytes  = 32
)

// settings is an App's configuration with placeholders replaced, empty
// values filled from the environment and defaults applied. The server and
// the CLI both derive it with resolve, which is what makes the CLI find the
// same store as the server.
type settings struct {
	profile       policy.Profile
	dataDir       string
	postgres      string
	redis         string
	redisPrefix   string
	redisMode     limits.RedisMode
	keySecret     []byte
	keySecretFrom string   // what set keySecret, for its errors
	upstream      *url.URL // nil when none is configured
	upstreamKey   string
	upstreamModel string

	search       search.Config
	openURLAllow []netip.Prefix

	// scratch, when validating, is a temporary directory that takes what
	// would be created in the data dir (the SQLite database, blobs), so
	// that validation leaves the data dir as it found it.
	scratch string
}

// validating is set in a process that provisions configs only to find
// their errors (the validate and adapt commands) and never serves them.
var validating atomic.Bool

// ValidateOnly makes provisioning in this process free of side effects on
// the data dir: Caddy's Validate provisions every module but gives them no
// sign that the config will not run, so the command tells us instead.
// Secrets missing from the data dir are then made up and never written,
// and the embedded database and blob directory are created in a scratch
// directory that Cleanup removes. PostgreSQL is still connected to (and
// migrated), so that validation reports a database it cannot reach.
func ValidateOnly() { validating.Store(true) }

// embedded reports whether state lives in the data dir (SQLite) rather
// than in PostgreSQL.
func (s settings) embedded() bool { return s.postgres == "" }

// storeKey names the store for the shared pool: two configs that name the
// same database share one handle.
func (s settings) storeKey() string {
	if s.embedded() {
		return "sqlite:" + s.sqlitePath()
	}
	return "postgres:" + s.postgres
}

// redisKey names the Redis client for the shared pool.
func (s settings) redisKey() string { return string(s.redisMode) + "|" + s.redis }

func (s settings) sqlitePath() string { return filepath.Join(s.stateDir(), "switchyard.db") }

// stateDir is where the database and blobs are created: the data dir, or
// the scratch directory when validating.
func (s settings) stateDir() string {
	if s.scratch != "" {
		return s.scratch
	}
	return s.dataDir
}

// useScratch points what would be created in the data dir at a fresh
// temporary directory.
func (s *settings) useScratch() error {
	dir, err := os.MkdirTemp("", "switchyard-validate-")
	if err != nil {
		return fmt.Errorf("validating: %v", err)
	}
	s.scratch = dir
	return nil
}

// secret reads the secret file name of the data dir, creating it on
// first use; when validating, a missing one is made up and not written.
func (s settings) secret(name string) ([]byte, error) {
	path := filepath.Join(s.dataDir, name)
	if s.scratch != "" {
		return secrets.ReadOrEphemeral(path)
	}
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %v", err)
	}
	return secrets.ReadOrCreate(path)
}

// value returns the first non-empty of the config value (after replacing
// global placeholders such as {env.NAME}) and the environment variable.
func value(repl *caddy.Replacer, configured, env string) string {
	if v := strings.TrimSpace(repl.ReplaceAll(configured, "")); v != "" {
		return v
	}
	return strings.TrimSpace(os.Getenv(env))
}

// expander replaces the global placeholders ({env.NAME}, {file.PATH}) of
// a config value with repl, for the Caddy-free packages' configs.
func expander(repl *caddy.Replacer) func(string) string {
	return func(s string) string { return repl.ReplaceAll(s, "") }
}

// lookup is value over repl, for the Caddy-free packages' settings.
func lookup(repl *caddy.Replacer) func(configured, env string) string {
	return func(configured, env string) string { return value(repl, configured, env) }
}

// valueFrom is value and what gave it: the config field name or the
// environment variable env, so that an error blames the right one.
func valueFrom(repl *caddy.Replacer, configured, field, env string) (string, string) {
	if v := strings.TrimSpace(repl.ReplaceAll(configured, "")); v != "" {
		if strings.Contains(configured, "{") {
			return v, fmt.Sprintf("%s (%s)", field, configured)
		}
		return v, field
	}
	return strings.TrimSpace(os.Getenv(env)), env
}

// checkLiteralSecret refuses a configured secret shorter than minBytes
// when it is given as is, not as a placeholder resolved later.
func checkLiteralSecret(secret string, minBytes int) error {
	if secret == "" || strings.Contains(secret, "{") || len(strings.TrimSpace(secret)) >= minBytes {
		return nil
	}
	return fmt.Errorf("must be at least %d characters long (for example: openssl rand -hex 32)", minBytes)
}

func (a *App) resolve() (settings, error) {
	repl := caddy.NewReplacer()
	var s settings

	rev := policy.DefaultRevision
	if v := value(repl, a.Revision, envRevision); v != "" {
		r, err := policy.ParseRevision(v)
		if err != nil {
			return s, err
		}
		rev = r
	}
	s.profile = policy.ProfileFor(rev)
	a.Limits.Apply(&s.profile)
	routing.ApplyModelPrices(&s.profile, a.Models)

	s.dataDir = value(repl, a.DataDir, envDataDir)
	if s.dataDir == "" {
		s.dataDir = defaultDataDir
	}
	abs, err := filepath.Abs(s.dataDir)
	if err != nil {
		return s, fmt.Errorf("data dir %q: %v", s.dataDir, err)
	}
	s.dataDir = abs
	s.postgres = value(repl, a.Postgres, envPostgres)
	s.redis = value(repl, a.Redis, envRedis)
	s.redisPrefix = value(repl, a.RedisPrefix, envRedisPrefix)
	if s.redisMode, err = limits.ParseRedisMode(value(repl, a.RedisMode, envRedisMode)); err != nil {
		return s, err
	}
	if s.redisPrefix == "" {
		s.redisPrefix = defaultRedisPrefix
	}

	if raw := value(repl, a.Upstream.URL, envUpstream); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("upstream %q: want an http(s) base URL such as http://127.0.0.1:8000/v1", raw)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		s.upstream = u
	}
	s.upstreamKey = value(repl, a.Upstream.APIKey, envUpstreamKey)
	s.upstreamModel = value(repl, a.Upstream.Model, envUpstreamModel)

	if secret, from := valueFrom(repl, a.KeySecret, "key_secret", envKeySecret); secret != "" {
		s.keySecret, s.keySecretFrom = []byte(secret), from
	}
	s.search = a.Search.Config(lookup(repl))
	if s.openURLAllow, err = a.OpenURL.Allowed(lookup(repl)); err != nil {
		return s, fmt.Errorf("open_url allow: %v", err)
	}
	return s, nil
}

// loadKeySecret returns the configured key secret or, in embedded mode,
// the one kept in the data dir, creating it on first use. Several nodes
// sharing PostgreSQL must hash keys alike, so there the secret must be
// configured explicitly.
func (s *settings) loadKeySecret() error {
	if len(s.keySecret) > 0 {
		if len(s.keySecret) < minKeySecretBytes {
			return fmt.Errorf("%s must be at least %d characters long", s.keySecretFrom, minKeySecretBytes)
		}
		return nil
	}
	if !s.embedded() {
		return fmt.Errorf("%s must be set when using PostgreSQL, to the same value on every node "+
			"(for example: openssl rand -hex 32)", envKeySecret)
	}
	secret, err := s.secret(keySecretFile)
	if err != nil {
		return fmt.Errorf("key secret %s: %v", filepath.Join(s.dataDir, keySecretFile), err)
	}
	s.keySecret = secret
	return nil
}
