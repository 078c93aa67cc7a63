// Package caddymodules adapts Switchyard to Caddy: the switchyard app that
// owns shared state, the HTTP handlers, their Caddyfile syntax and the CLI
// subcommands. Everything here is a thin layer over the Caddy-free packages
// node, policy, storage, translator, billing and the others below them.
package caddymodules

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/internal/version"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/routing"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/telemetry"
	"github.com/switchyardhq/switchyard/tools/openurl"
	"github.com/switchyardhq/switchyard/tools/search"
	"github.com/switchyardhq/switchyard/translator"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the switchyard app: it owns what the handlers share, the store,
// the Redis client, the key hasher and the revision profile, and keeps them
// across config reloads.
//
// Every setting left empty is read from its environment variable
// (docs/configuration.md), so a config that says nothing runs on the
// embedded defaults. Values may use global placeholders such as
// {env.NAME} and {file.PATH}.
type App struct {
	// Where the node keeps its state: revision, data_dir, postgres, redis,
	// redis_mode, redis_prefix (node.Config has their defaults).
	node.Config

	// Overrides of the revision's limits, and how limits are enforced.
	// Default: the revision's limits, enforced in process or on Redis.
	Limits *limits.Config `json:"limits,omitempty"`

	// How charges are committed to the ledger: in batches, off the path
	// the client waits for. Default: see billing.LedgerSettings.
	Ledger *billing.LedgerSettings `json:"ledger,omitempty"`

	// The Files API: blob storage, malware scanning, cleanup. Default:
	// files in data_dir/files, no scanning unless $SWITCHYARD_CLAMD_ADDR
	// is set.
	Files *files.Settings `json:"files,omitempty"`

	// Secret keying the HMAC under which API keys are stored, at least
	// 32 characters, identical on every node. Default:
	// $SWITCHYARD_KEY_SECRET; with the embedded store and neither set, a
	// secret generated once and kept in data_dir/key_secret (mode 0600).
	KeySecret string `json:"key_secret,omitempty"`

	// How long a node may reuse a key lookup. A cached key costs its
	// request one read, the balance, which also returns the store's key
	// generation, and none while the store shows no commit since: every
	// revocation raises the generation and commits, so a revoked key is
	// refused on its next request whatever this is (with PostgreSQL, once
	// the commit's notification reached the node: well under a
	// millisecond, at most 250 ms). It only bounds the memory of idle keys
	// and how long a key revoked behind the store's back (by hand in SQL)
	// stays usable. Default: 1m; a negative value turns caching off.
	KeyCacheTTL caddy.Duration `json:"key_cache_ttl,omitempty"`

	// The OpenAI-compatible backend.
	Upstream node.Upstream `json:"upstream,omitempty"`

	// The models served, each by a pool of upstreams with load
	// balancing, health checks, retries and fallbacks
	// (docs/routing.md). When set, a request's model picks its pool
	// and Upstream is not used. Default: none, the single upstream
	// serves every request.
	Models []*routing.Model `json:"models,omitempty"`

	// Providers of the web_search tool. Default: from the environment
	// ($SWITCHYARD_SEARCH_URL and friends); none means no web search.
	Search *search.Settings `json:"search,omitempty"`

	// Addresses the open_url tool may reach besides public ones.
	// Default: $SWITCHYARD_OPEN_URL_ALLOW.
	OpenURL *openurl.Settings `json:"open_url,omitempty"`

	// Bounds on the tool calls of /v3 chat completions. Default: see
	// translator.ToolSettings.
	Tools *translator.ToolSettings `json:"tools,omitempty"`

	settings node.Settings
	hasher   policy.KeyHasher
	backend  *backend
	redis    redis.UniversalClient
	limiter  limits.Limiter
	queue    *limits.Queue // nil: no cap on generations in flight
	logger   *zap.Logger
	metrics  *telemetry.Metrics // registered on this config's registry
	pools    *pools             // nil without models

	files     *lazyFiles // the Files API, opened on first use
	admission *admission // the routes' meters and the request bodies' reader
	guard     *lazyGuard // failed authentications per client address
}

// lazyGuard is the app's one ipGuard, made for the first handler that
// authenticates: every switchyard_auth and the admin API share it, so
// that an address blocked on one route is blocked on all of them.
type lazyGuard struct {
	once  sync.Once
	guard *ipGuard
	err   error
}

// lazyFiles opens the Files API on first use, so that a config without
// switchyard_files opens no blob store and runs no janitor.
type lazyFiles struct {
	once     sync.Once
	svc      *files.Service
	err      error
	storeKey string // fileStores key, once acquired
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "switchyard",
		New: func() caddy.Module { return new(App) },
	}
}

// Validate implements caddy.Validator.
func (a *App) Validate() error {
	var prices map[string]policy.ModelPrice
	if a.Limits != nil {
		prices = a.Limits.Prices
	}
	var secretErr error
	if err := node.CheckLiteralSecret(a.KeySecret, node.MinKeySecretBytes); err != nil {
		secretErr = fmt.Errorf("key_secret: %v", err)
	}
	return errors.Join(secretErr, a.Limits.Validate(), a.Files.Validate(), a.Ledger.Validate(), a.Tools.Validate(), routing.ValidateModels(a.Models, prices, expander(caddy.NewReplacer())))
}

// Provision resolves the settings and takes (or opens) the shared store
// and Redis client.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	a.files = new(lazyFiles)
	a.guard = new(lazyGuard)
	a.admission = newAdmission(a.Limits)
	a.metrics = telemetry.Process
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		m, err := telemetry.Process.Register(reg)
		if err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
		a.metrics = m
	}
	s, err := a.resolve()
	if err != nil {
		return err
	}
	if validating.Load() && s.Embedded() {
		if err := s.UseScratch(); err != nil {
			return err
		}
		a.settings.Scratch = s.Scratch // for Cleanup, should the rest fail
	}
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := telemetry.RegisterStoreCounters(reg, s.Embedded()); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	if err := s.LoadKeySecret(); err != nil {
		return err
	}
	a.settings = s
	a.metrics = a.metricsFor(a.metrics)
	if a.hasher, err = policy.NewKeyHasher(s.KeySecret); err != nil {
		return err
	}

	a.backend, err = acquireBackend(s, a.Ledger, a.logger)
	if err != nil {
		return err
	}
	if s.Redis != "" {
		if a.redis, err = acquireRedis(s); err != nil {
			return err
		}
		if err := telemetry.CountRedis(ctx.GetMetricsRegistry(), a.redis); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	if a.limiter, err = acquireLimiter(s, a.Limits, a.redis, a.logger); err != nil {
		return err
	}
	if !validating.Load() { // the sweep writes to Redis
		a.backend.reconcile(a.limiter, a.logger)
	}
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := telemetry.RegisterLedgerGauge(reg, a.backend.ledger); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	if a.Limits != nil && a.Limits.Queue != nil {
		if a.queue, err = acquireQueue(s, a.Limits.Queue, a.limiter); err != nil {
			return err
		}
		if reg := ctx.GetMetricsRegistry(); reg != nil {
			if err := telemetry.RegisterQueueGauge(reg, a.queue); err != nil {
				return fmt.Errorf("registering metrics: %v", err)
			}
		}
	}
	if err := a.provisionModels(ctx); err != nil {
		return err
	}
	a.logger.Info("switchyard ready",
		zap.String("version", version.String()),
		zap.String("revision", string(s.Profile.Revision)),
		zap.String("store", s.StoreDescription()),
		zap.Bool("redis", s.Redis != ""),
		zap.String("upstream", s.UpstreamDescription()),
		zap.Int("models", len(a.Models)),
		zap.Duration("key_cache_ttl", a.keyCacheTTL()))
	return nil
}

// Start implements caddy.App. The shared state is started when acquired.
func (a *App) Start() error {
	// The running config's log is where a recovered panic belongs.
	guard.SetLogger(slogFor(a.logger.Named("panics")))
	return nil
}

// Stop implements caddy.App. Shared state outlives a config; Cleanup
// releases this config's hold on it.
func (a *App) Stop() error { return nil }

// Cleanup releases the store and Redis client; the last config to let go
// closes them.
func (a *App) Cleanup() error {
	var errs []error
	if err := a.pools.cleanup(); err != nil {
		errs = append(errs, err)
	}
	if a.backend != nil {
		if _, err := backends.Delete(a.settings.StoreKey()); err != nil {
			errs = append(errs, err)
		}
	}
	if a.files != nil && a.files.storeKey != "" {
		if _, err := fileStores.Delete(a.files.storeKey); err != nil {
			errs = append(errs, err)
		}
	}
	if a.queue != nil {
		if _, err := queues.Delete(a.settings.QueueKey(a.Limits.Queue)); err != nil {
			errs = append(errs, err)
		}
	}
	if a.limiter != nil {
		if _, err := limiters.Delete(a.settings.LimiterKey(a.Limits)); err != nil {
			errs = append(errs, err)
		}
	}
	if a.redis != nil {
		if _, err := redisClients.Delete(a.settings.RedisKey()); err != nil {
			errs = append(errs, err)
		}
	}
	if a.settings.Scratch != "" {
		if err := os.RemoveAll(a.settings.Scratch); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("releasing shared state: %v", errs)
	}
	return nil
}

// Store is the durable state shared by every handler.
func (a *App) Store() storage.Store { return a.backend.store }

// Profile is the active revision profile.
func (a *App) Profile() policy.Profile { return a.settings.Profile }

// Redis is the shared Redis client, or nil when limits are in-process.
func (a *App) RedisClient() redis.UniversalClient { return a.redis }

// Authenticator returns an authenticator over the shared store and cache.
func (a *App) Authenticator() *policy.Authenticator {
	return policy.NewAuthenticator(a.backend.store, a.hasher, a.backend.cache(), a.keyCacheTTL())
}

func (a *App) keyCacheTTL() time.Duration { return node.KeyCacheTTL(time.Duration(a.KeyCacheTTL)) }

// Limiter enforces request rates and concurrent streams.
func (a *App) Limiter() limits.Limiter { return a.limiter }

// Queue is the admission queue in front of the upstream, or nil.
func (a *App) Queue() *limits.Queue { return a.queue }

// FilesService returns the Files API service, opening its blob store and starting
// its janitor on first use.
func (a *App) FilesService() (*files.Service, error) {
	a.files.once.Do(func() { a.files.svc, a.files.err = a.openFiles() })
	return a.files.svc, a.files.err
}

func (a *App) openFiles() (*files.Service, error) {
	repl := caddy.NewReplacer()
	location, err := a.Files.Location(expander(repl), a.settings.StateDir(), a.settings.Scratch != "")
	if err != nil {
		return nil, err
	}
	var interval time.Duration
	if a.Files != nil {
		interval = time.Duration(a.Files.JanitorInterval)
	}
	fs, err := acquireFileStore(a.settings, location, a.backend.store, interval, a.logger)
	if err != nil {
		return nil, fmt.Errorf("files: opening blob store: %v", err)
	}
	a.files.storeKey = fileStoreKey(a.settings, location)
	cfg := files.Config{Meta: a.backend.store, Blobs: fs.blobs, Profile: a.settings.Profile, Logger: slogFor(a.logger.Named("files"))}
	a.Files.Apply(&cfg, lookup(repl))
	return files.NewService(cfg)
}

// UpstreamURL is the configured upstream base URL, or nil.
func (a *App) UpstreamURL() *url.URL { return a.settings.Upstream }

// provisionModels provisions the models' pools and their metrics.
func (a *App) provisionModels(ctx caddy.Context) error {
	rm := telemetry.ProcessRoutes
	reg := ctx.GetMetricsRegistry()
	if reg != nil && len(a.Models) > 0 {
		var err error
		if rm, err = telemetry.ProcessRoutes.Register(reg); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	ps, err := provisionPools(ctx, a.Models, rm)
	if err != nil {
		return err
	}
	a.pools = ps
	if reg != nil && ps != nil {
		if err := registerPoolCollector(reg, ps); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}
	return nil
}

// appFrom fetches the switchyard app for a handler's Provision.
func appFrom(ctx caddy.Context) (*App, error) {
	v, err := ctx.App("switchyard")
	if err != nil {
		return nil, fmt.Errorf("loading switchyard app: %v", err)
	}
	return v.(*App), nil
}

// appHandler is what a handler that serves requests on the switchyard
// app's state keeps from its provisioning: the app, and its own logger,
// named after its module.
type appHandler struct {
	app    *App
	logger *zap.Logger
}

// provisionApp finds the switchyard app for the handler being
// provisioned.
func (h *appHandler) provisionApp(ctx caddy.Context) error {
	app, err := appFrom(ctx)
	if err != nil {
		return err
	}
	h.app, h.logger = app, ctx.Logger()
	return nil
}

// principal is the caller switchyard_auth authenticated. A request
// without one reached a handler placed before switchyard_auth: it is
// answered 500 and the mistake logged.
func (h *appHandler) principal(w http.ResponseWriter, r *http.Request) (policy.Principal, bool) {
	p, ok := h.principalIn(w, r, stateOf(r.Context()))
	return *p, ok
}

// principalIn is principal for a handler that has the request's state st
// at hand.
func (h *appHandler) principalIn(w http.ResponseWriter, r *http.Request, st *requestState) (*policy.Principal, bool) {
	p, ok := st.principal(r.Context())
	if !ok {
		h.logger.Error("this handler runs without switchyard_auth in front of it: put switchyard_auth first")
		apierror.Write(w, apierror.Internal())
	}
	return p, ok
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.Validator    = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
