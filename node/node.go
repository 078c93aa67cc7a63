// Package node resolves what one gateway process runs on, from the
// switchyard app's config and the environment: the revision's profile,
// the data dir and the secrets kept in it, the store, Redis, the
// upstream, and the admin API's verifier. The server and the CLI both
// resolve it here, which is what makes the CLI find the same store as the
// server. Values may hold global placeholders, which the caller's expand
// function replaces.
package node

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/secrets"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/postgres"
	"github.com/switchyardhq/switchyard/storage/sqlite"
	"github.com/switchyardhq/switchyard/tools/search"
)

// The operator contract: environment variables read when the Caddyfile or
// JSON config leaves a setting empty. Caddyfile.example and the CLI rely on
// them, so their names and defaults are part of the public interface.
const (
	EnvRevision      = "SWITCHYARD_REVISION"
	EnvDataDir       = "SWITCHYARD_DATA_DIR"
	EnvPostgres      = "SWITCHYARD_POSTGRES_URL"
	EnvRedis         = "SWITCHYARD_REDIS_URL"
	EnvRedisPrefix   = "SWITCHYARD_REDIS_PREFIX"
	EnvRedisMode     = "SWITCHYARD_REDIS_MODE"
	EnvKeySecret     = "SWITCHYARD_KEY_SECRET"
	EnvUpstream      = "SWITCHYARD_UPSTREAM"
	EnvUpstreamKey   = "SWITCHYARD_UPSTREAM_API_KEY"
	EnvUpstreamModel = "SWITCHYARD_UPSTREAM_MODEL"

	defaultDataDir     = "./data"
	defaultRedisPrefix = "switchyard:"
	keySecretFile      = "key_secret"

	// MinKeySecretBytes is the shortest key secret accepted.
	MinKeySecretBytes = 32
)

// Config is where a node keeps its state, the part of the switchyard
// app's config that the app embeds.
type Config struct {
	// Spec revision whose limits and behaviours apply: "A" or "B".
	// Default: $SWITCHYARD_REVISION, else B.
	Revision string `json:"revision,omitempty"`

	// Directory for the embedded SQLite database, the generated key
	// secret and local file blobs. Default: $SWITCHYARD_DATA_DIR, else
	// ./data.
	DataDir string `json:"data_dir,omitempty"`

	// PostgreSQL connection string. When set (here or in
	// $SWITCHYARD_POSTGRES_URL) PostgreSQL replaces the embedded SQLite
	// store. Default: empty.
	Postgres string `json:"postgres,omitempty"`

	// Redis URL (redis://host:port/db). When set (here or in
	// $SWITCHYARD_REDIS_URL) limits are shared across nodes through
	// Redis. Default: empty, in-process limits.
	Redis string `json:"redis,omitempty"`

	// What the Redis URL names: "single" (one server), "cluster" (a Redis
	// Cluster; the URL names one or more nodes:
	// redis://host1:6379?addr=host2:6379&addr=host3:6379) or "sentinel"
	// (a primary Sentinel fails over; the URL names the sentinels and
	// the primary: redis://s1:26379/0?master_name=main&addr=s2:26379).
	// Default: $SWITCHYARD_REDIS_MODE, else single. docs/operations.md.
	RedisMode string `json:"redis_mode,omitempty"`

	// Prefix of every key Switchyard writes to Redis, so that several
	// deployments can share one Redis. Default: $SWITCHYARD_REDIS_PREFIX,
	// else "switchyard:".
	RedisPrefix string `json:"redis_prefix,omitempty"`
}

// Upstream is the OpenAI-compatible backend behind the gateway.
type Upstream struct {
	// Base URL including the version path, e.g. http://127.0.0.1:8000/v1.
	// Default: $SWITCHYARD_UPSTREAM. Empty: requests that need the
	// upstream answer 502 upstream_unavailable.
	URL string `json:"url,omitempty"`

	// Bearer key sent upstream in place of the caller's key, which is
	// never forwarded. Default: $SWITCHYARD_UPSTREAM_API_KEY, else none.
	APIKey string `json:"api_key,omitempty"`

	// Model name sent upstream for /v3 requests. Default:
	// $SWITCHYARD_UPSTREAM_MODEL, else the upstream's first model.
	Model string `json:"model,omitempty"`
}

// Settings is a node's configuration with placeholders replaced, empty
// values filled from the environment and defaults applied.
type Settings struct {
	Profile       policy.Profile
	DataDir       string // absolute
	Postgres      string // empty: the embedded SQLite store
	Redis         string // empty: limits in process
	RedisPrefix   string
	RedisMode     limits.RedisMode
	KeySecret     []byte
	keySecretFrom string   // what set KeySecret, for its errors
	Upstream      *url.URL // nil when none is configured
	UpstreamKey   string
	UpstreamModel string

	Search       search.Config
	OpenURLAllow []netip.Prefix

	// Scratch, when validating, is a temporary directory that takes what
	// would be created in the data dir (the SQLite database, blobs), so
	// that validation leaves the data dir as it found it.
	Scratch string
}

// Resolve resolves c, keySecret and up: placeholders replaced with
// expand, empty values read from the environment, defaults applied. The
// profile is the revision's, before the limits' overrides.
func Resolve(c Config, keySecret string, up Upstream, expand func(string) string) (Settings, error) {
	var s Settings
	rev := policy.DefaultRevision
	if v := Value(expand, c.Revision, EnvRevision); v != "" {
		r, err := policy.ParseRevision(v)
		if err != nil {
			return s, err
		}
		rev = r
	}
	s.Profile = policy.ProfileFor(rev)

	s.DataDir = Value(expand, c.DataDir, EnvDataDir)
	if s.DataDir == "" {
		s.DataDir = defaultDataDir
	}
	abs, err := filepath.Abs(s.DataDir)
	if err != nil {
		return s, fmt.Errorf("data dir %q: %v", s.DataDir, err)
	}
	s.DataDir = abs
	s.Postgres = Value(expand, c.Postgres, EnvPostgres)
	s.Redis = Value(expand, c.Redis, EnvRedis)
	s.RedisPrefix = Value(expand, c.RedisPrefix, EnvRedisPrefix)
	if s.RedisMode, err = limits.ParseRedisMode(Value(expand, c.RedisMode, EnvRedisMode)); err != nil {
		return s, err
	}
	if s.RedisPrefix == "" {
		s.RedisPrefix = defaultRedisPrefix
	}

	if raw := Value(expand, up.URL, EnvUpstream); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("upstream %q: want an http(s) base URL such as http://127.0.0.1:8000/v1", raw)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		s.Upstream = u
	}
	s.UpstreamKey = Value(expand, up.APIKey, EnvUpstreamKey)
	s.UpstreamModel = Value(expand, up.Model, EnvUpstreamModel)

	if secret, from := ValueFrom(expand, keySecret, "key_secret", EnvKeySecret); secret != "" {
		s.KeySecret, s.keySecretFrom = []byte(secret), from
	}
	return s, nil
}

// Value returns the first non-empty of the config value (after replacing
// global placeholders such as {env.NAME} with expand) and the environment
// variable env.
func Value(expand func(string) string, configured, env string) string {
	v, _ := ValueFrom(expand, configured, "", env)
	return v
}

// Lookup is Value over expand, for the settings of the packages that take
// a lookup function.
func Lookup(expand func(string) string) func(configured, env string) string {
	return func(configured, env string) string { return Value(expand, configured, env) }
}

// ValueFrom is Value and what gave it: the config field name or the
// environment variable env, so that an error blames the right one.
func ValueFrom(expand func(string) string, configured, field, env string) (string, string) {
	if v := strings.TrimSpace(expand(configured)); v != "" {
		if strings.Contains(configured, "{") {
			return v, fmt.Sprintf("%s (%s)", field, configured)
		}
		return v, field
	}
	return strings.TrimSpace(os.Getenv(env)), env
}

// CheckLiteralSecret refuses a configured secret shorter than minBytes
// when it is given as is, not as a placeholder resolved later.
func CheckLiteralSecret(secret string, minBytes int) error {
	if secret == "" || strings.Contains(secret, "{") || len(strings.TrimSpace(secret)) >= minBytes {
		return nil
	}
	return fmt.Errorf("must be at least %d characters long (for example: openssl rand -hex 32)", minBytes)
}

// Embedded reports whether state lives in the data dir (SQLite) rather
// than in PostgreSQL.
func (s Settings) Embedded() bool { return s.Postgres == "" }

// StoreKey names the store for the shared pool: two configs that name the
// same database share one handle.
func (s Settings) StoreKey() string {
	if s.Embedded() {
		return "sqlite:" + s.SQLitePath()
	}
	return "postgres:" + s.Postgres
}

// RedisKey names the Redis client for the shared pool.
func (s Settings) RedisKey() string { return string(s.RedisMode) + "|" + s.Redis }

// LimiterKey names the limiter a config needs, for the shared pool: one
// in-process limiter per process, or a Redis limiter per Redis, prefix and
// tuning.
func (s Settings) LimiterKey(c *limits.Config) string {
	if s.Redis == "" {
		return "local"
	}
	if c == nil {
		c = new(limits.Config)
	}
	return fmt.Sprintf("redis|%s|%s|%d|%s|%s|%d|%d", s.RedisKey(), s.RedisPrefix,
		c.RedisTimeout, c.RatePolicy, c.StreamPolicy, c.LeaseTTL, c.Nodes)
}

// QueueKey names the admission queue q configures, for the shared pool.
func (s Settings) QueueKey(q *limits.QueueSettings) string {
	return fmt.Sprintf("%s|%s|%d|%d|%d", s.Redis, s.RedisPrefix, q.Slots, q.MaxWaiting, q.MaxWait)
}

// DefaultKeyCacheTTL is how long a node reuses a key lookup unless the
// app's key_cache_ttl says otherwise.
const DefaultKeyCacheTTL = time.Minute

// KeyCacheTTL is the key cache's TTL that configured (key_cache_ttl)
// sets: the default for zero, none (0) for a negative value.
func KeyCacheTTL(configured time.Duration) time.Duration {
	if configured == 0 {
		return DefaultKeyCacheTTL
	}
	return max(configured, 0)
}

// SQLitePath is the embedded database's file.
func (s Settings) SQLitePath() string { return filepath.Join(s.StateDir(), "switchyard.db") }

// StateDir is where the database and blobs are created: the data dir, or
// the scratch directory when validating.
func (s Settings) StateDir() string {
	if s.Scratch != "" {
		return s.Scratch
	}
	return s.DataDir
}

// UseScratch points what would be created in the data dir at a fresh
// temporary directory.
func (s *Settings) UseScratch() error {
	dir, err := os.MkdirTemp("", "switchyard-validate-")
	if err != nil {
		return fmt.Errorf("validating: %v", err)
	}
	s.Scratch = dir
	return nil
}

// secret reads the secret file name of the data dir, creating it on
// first use; when validating, a missing one is made up and not written.
func (s Settings) secret(name string) ([]byte, error) {
	path := filepath.Join(s.DataDir, name)
	if s.Scratch != "" {
		return secrets.ReadOrEphemeral(path)
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %v", err)
	}
	return secrets.ReadOrCreate(path)
}

// LoadKeySecret keeps the configured key secret or, in embedded mode,
// reads the one kept in the data dir, creating it on first use. Several
// nodes sharing PostgreSQL must hash keys alike, so there the secret must
// be configured explicitly.
func (s *Settings) LoadKeySecret() error {
	if len(s.KeySecret) > 0 {
		if len(s.KeySecret) < MinKeySecretBytes {
			return fmt.Errorf("%s must be at least %d characters long", s.keySecretFrom, MinKeySecretBytes)
		}
		return nil
	}
	if !s.Embedded() {
		return fmt.Errorf("%s must be set when using PostgreSQL, to the same value on every node "+
			"(for example: openssl rand -hex 32)", EnvKeySecret)
	}
	secret, err := s.secret(keySecretFile)
	if err != nil {
		return fmt.Errorf("key secret %s: %v", filepath.Join(s.DataDir, keySecretFile), err)
	}
	s.KeySecret = secret
	return nil
}

// OpenStore opens the store the settings name, applying migrations.
func OpenStore(ctx context.Context, s Settings) (storage.Store, error) {
	if s.Embedded() {
		st, err := sqlite.Open(ctx, s.SQLitePath(), storage.Options{})
		if err != nil {
			return nil, fmt.Errorf("opening SQLite store %s: %v", s.SQLitePath(), err)
		}
		return st, nil
	}
	st, err := postgres.Open(ctx, s.Postgres, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("opening PostgreSQL store: %v", err)
	}
	return st, nil
}

// StoreDescription names the store for the log.
func (s Settings) StoreDescription() string {
	if s.Embedded() {
		return "sqlite " + s.SQLitePath()
	}
	return "postgres"
}

// UpstreamDescription names the upstream for the log, without its
// credentials.
func (s Settings) UpstreamDescription() string {
	if s.Upstream == nil {
		return "none"
	}
	return s.Upstream.Redacted()
}
