package routing

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy"
)

// Model is one model the gateway serves, by the name clients send as
// "model": a pool of upstreams behind Caddy's reverse_proxy, with its
// load balancing, health checks, retries and fallbacks (docs/routing.md).
type Model struct {
	// The name clients send as "model" and see in GET /v1/models.
	// Required; unique among the models.
	Name string `json:"name"`

	// The backends serving the model. At least one.
	Upstreams []*ModelUpstream `json:"upstreams"`

	// How a backend is chosen for each request: round_robin,
	// least_conn, weighted_round_robin (by the upstreams' weights),
	// first (the first available in the order written) or random.
	// Default: round_robin.
	LBPolicy string `json:"lb_policy,omitempty"`

	// How many other backends of the pool a request may try after the
	// first failed before its answer started (unreachable, no response
	// headers in time, 5xx, 429). Default: one less than the number of
	// upstreams, so that each is tried at most once.
	Retries *int `json:"retries,omitempty"`

	// Path of the active health check, below each upstream's base URL:
	// with a base of http://h:8000/v1, "/models" checks GET /v1/models.
	// Any 2xx passes. "off" disables active checks. Default: /models.
	HealthPath string `json:"health_path,omitempty"`

	// How often each upstream is checked. Default: 30s.
	HealthInterval duration.Duration `json:"health_interval,omitempty"`

	// Longest a check may take before it counts as failed. Default: 5s.
	HealthTimeout duration.Duration `json:"health_timeout,omitempty"`

	// How long a failure counts against an upstream (passive health):
	// a refused connection, a missing response, a 5xx or 429 answer,
	// or one slower than unhealthy_latency. Default: 10s.
	FailDuration duration.Duration `json:"fail_duration,omitempty"`

	// Failures within fail_duration that take an upstream out of the
	// pool until they expire. Default: 1.
	MaxFails int `json:"max_fails,omitempty"`

	// Response headers slower than this count as a failure. Default: 0,
	// latency is not judged.
	UnhealthyLatency duration.Duration `json:"unhealthy_latency,omitempty"`

	// Answer statuses that count as a failure of the upstream, besides
	// being retried: a status, or a class such as 5 for every 5xx. An
	// empty list (Caddyfile: none) counts none, so that a request the
	// backends all answer 500 cannot take every upstream out of the
	// pool; the retry may then choose the same upstream again under
	// every policy but round_robin. Default: 5xx and 429.
	UnhealthyStatus *[]int `json:"unhealthy_status,omitempty"`

	// Longest wait for a connection to an upstream. Default: 10s.
	DialTimeout duration.Duration `json:"dial_timeout,omitempty"`

	// Longest wait, once the request is sent, for an upstream's
	// response headers; past it the next upstream is tried. Default:
	// 120s.
	ResponseHeaderTimeout duration.Duration `json:"response_header_timeout,omitempty"`

	// What a million tokens of this model cost, in cents with up to two
	// decimals (7.5 is $0.075); the same
	// per-model prices as limits' price, which must not name this model
	// too. Default: the revision's prices.
	Price *policy.ModelPrice `json:"price,omitempty"`

	// Other models, in order, that answer when this model's pool could
	// not start an answer. Each is tried with its own pool, and its
	// own price is charged; their own fallbacks are not followed.
	// Default: none.
	Fallbacks []string `json:"fallbacks,omitempty"`
}

// ModelUpstream is one backend of a model's pool.
type ModelUpstream struct {
	// Base URL including the version path, e.g. http://10.0.0.5:8000/v1.
	// Required.
	URL string `json:"url"`

	// Bearer key sent to this upstream in place of the caller's key.
	// Default: none, no Authorization header.
	APIKey string `json:"api_key,omitempty"`

	// The model name this upstream knows the model by, written into the
	// request in place of the name the client sent. Default: the
	// model's name.
	Model string `json:"model,omitempty"`

	// Share of requests under weighted_round_robin. Default: 1.
	Weight int `json:"weight,omitempty"`

	// The upstream's name in metrics, logs and usage records. Default:
	// the URL's host:port.
	Name string `json:"name,omitempty"`
}

// Defaults of a Model.
const (
	defaultHealthPath     = "/models"
	defaultHealthInterval = 30 * time.Second
	defaultHealthTimeout  = 5 * time.Second
	defaultFailDuration   = 10 * time.Second
	defaultMaxFails       = 1
)

// lbPolicies are the selection policies of reverse_proxy a model may use.
var lbPolicies = []string{"round_robin", "least_conn", "weighted_round_robin", "first", "random"}

// Resolve resolves the upstream u of model m: placeholders replaced by
// expand, the URL taken apart.
func (u *ModelUpstream) Resolve(expand func(string) string, m *Model) (Upstream, error) {
	return ParseUpstream(m.Name, expand(u.URL), expand(u.APIKey), u.Model, u.Name, u.Weight)
}

// ValidateModels checks the models block as a whole: names, upstreams,
// policies and fallbacks that name configured models. prices are the
// limits' per-model prices, which must not price a model twice; expand
// replaces the placeholders of the upstreams' URLs and keys.
func ValidateModels(models []*Model, prices map[string]policy.ModelPrice, expand func(string) string) error {
	var errs []error
	names := make(map[string]bool, len(models))
	for _, m := range models {
		if m == nil || m.Name == "" {
			errs = append(errs, errors.New("models: a model needs a name"))
			continue
		}
		if names[m.Name] {
			errs = append(errs, fmt.Errorf("models: model %q configured twice", m.Name))
		}
		names[m.Name] = true
	}
	for _, m := range models {
		if m == nil || m.Name == "" {
			continue
		}
		errs = append(errs, m.validate(names, prices, expand))
	}
	return errors.Join(errs...)
}

func (m *Model) validate(names map[string]bool, prices map[string]policy.ModelPrice, expand func(string) string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("model %q: %s", m.Name, fmt.Sprintf(format, args...))
	}
	var errs []error
	if len(m.Upstreams) == 0 {
		errs = append(errs, fail("needs at least one upstream"))
	}
	upNames := make(map[string]bool)
	for _, u := range m.Upstreams {
		if u == nil {
			errs = append(errs, fail("empty upstream"))
			continue
		}
		r, err := u.Resolve(expand, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if u.Weight < 0 {
			errs = append(errs, fail("upstream %s: weight must not be negative", r.Name))
		}
		if upNames[r.Name] {
			errs = append(errs, fail("two upstreams named %q: give them distinct names", r.Name))
		}
		upNames[r.Name] = true
	}
	if err := CheckLBPolicy(m.LBPolicy); err != nil {
		errs = append(errs, fail("%v", err))
	}
	if m.Retries != nil && *m.Retries < 0 {
		errs = append(errs, fail("retries must not be negative"))
	}
	if err := CheckHealthPath(m.HealthPath); err != nil {
		errs = append(errs, fail("%v", err))
	}
	if m.HealthInterval < 0 || m.HealthTimeout < 0 || m.FailDuration < 0 || m.UnhealthyLatency < 0 ||
		m.DialTimeout < 0 || m.ResponseHeaderTimeout < 0 {
		errs = append(errs, fail("durations must not be negative"))
	}
	if m.UnhealthyStatus != nil {
		for _, c := range *m.UnhealthyStatus {
			if (c < 1 || c > 5) && (c < 100 || c > 599) {
				errs = append(errs, fail("unhealthy_status %d: want a status or a class 1 to 5", c))
			}
		}
	}
	if m.MaxFails < 0 {
		errs = append(errs, fail("max_fails must not be negative"))
	}
	if m.Price != nil {
		if m.Price.InputPerMTok < 0 || m.Price.OutputPerMTok < 0 {
			errs = append(errs, fail("prices must not be negative"))
		}
		if _, dup := prices[m.Name]; dup {
			errs = append(errs, fail("priced both here and in limits"))
		}
	}
	seen := make(map[string]bool)
	for _, f := range m.Fallbacks {
		switch {
		case f == m.Name:
			errs = append(errs, fail("falls back to itself"))
		case !names[f]:
			errs = append(errs, fail("fallback %q is not a configured model", f))
		case seen[f]:
			errs = append(errs, fail("fallback %q listed twice", f))
		}
		seen[f] = true
	}
	return errors.Join(errs...)
}

// ApplyModelPrices adds the models' prices to the profile's per-model
// prices, the ones limits' price sets, and the hold prices of their
// fallback chains.
func ApplyModelPrices(p *policy.Profile, models []*Model) {
	priced := make([]Priced, 0, len(models))
	for _, m := range models {
		if m != nil {
			priced = append(priced, Priced{Name: m.Name, Price: m.Price, Fallbacks: m.Fallbacks})
		}
	}
	ApplyPrices(p, priced)
}

// retryStatusExpr is the retry_match expression that sends a 5xx or 429
// answer on to the pool's next upstream. reverse_proxy evaluates it on
// the response headers, before a byte of the body reached the client.
const retryStatusExpr = "{http.reverse_proxy.status_code} >= 500 || {http.reverse_proxy.status_code} == 429"

// ReverseProxyJSON is the JSON config of the Caddy reverse_proxy handler
// that serves model m from its upstreams ups (m's, resolved), as an
// operator would write it, so that it goes through reverse_proxy's own
// decoding and validation. The transport is not in it: the adapter sets
// one that applies each upstream's base path, key and model name.
func (m *Model) ReverseProxyJSON(ups []Upstream) ([]byte, error) {
	upstreams := make([]map[string]string, len(ups))
	weights := make([]int, len(ups))
	for i, u := range ups {
		upstreams[i] = map[string]string{"dial": u.Dial}
		weights[i] = u.Weight
	}
	selection := map[string]any{"policy": m.LBPolicy}
	switch m.LBPolicy {
	case "":
		selection["policy"] = "round_robin"
	case "weighted_round_robin":
		selection["weights"] = weights
	}
	retries := len(ups) - 1
	if m.Retries != nil {
		retries = *m.Retries
	}
	lb := map[string]any{
		"selection_policy": selection,
		// A transport error (no response headers in time, a reset
		// connection) is retried for POST too: nothing reached the
		// client yet. The second set retries 5xx and 429 answers.
		"retry_match": []map[string]any{
			{"method": []string{http.MethodGet, http.MethodPost}},
			{"expression": retryStatusExpr},
		},
	}
	if retries > 0 {
		lb["retries"] = retries
	}
	unhealthy := []int{5, http.StatusTooManyRequests}
	if m.UnhealthyStatus != nil {
		unhealthy = *m.UnhealthyStatus
	}
	passive := map[string]any{
		"fail_duration": orDuration(time.Duration(m.FailDuration), defaultFailDuration).String(),
		"max_fails":     orInt(m.MaxFails, defaultMaxFails),
	}
	if len(unhealthy) > 0 {
		passive["unhealthy_status"] = unhealthy
	}
	if m.UnhealthyLatency > 0 {
		passive["unhealthy_latency"] = time.Duration(m.UnhealthyLatency).String()
	}
	health := map[string]any{"passive": passive}
	if m.HealthPath != "off" {
		path := m.HealthPath
		if path == "" {
			path = defaultHealthPath
		}
		health["active"] = map[string]any{
			"uri":      path,
			"interval": orDuration(time.Duration(m.HealthInterval), defaultHealthInterval).String(),
			"timeout":  orDuration(time.Duration(m.HealthTimeout), defaultHealthTimeout).String(),
		}
	}
	return json.Marshal(map[string]any{
		"upstreams":      upstreams,
		"load_balancing": lb,
		"health_checks":  health,
		// No header operations, as in UpstreamJSON.
	})
}

// TransportTimeouts are the model's dial and response header timeouts,
// dial and header where it sets none.
func (m *Model) TransportTimeouts(dial, header time.Duration) (time.Duration, time.Duration) {
	return orDuration(time.Duration(m.DialTimeout), dial), orDuration(time.Duration(m.ResponseHeaderTimeout), header)
}

func orDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// CheckLBPolicy refuses a load-balancing policy the pool does not know;
// "" is the default.
func CheckLBPolicy(p string) error {
	if p != "" && !slices.Contains(lbPolicies, p) {
		return fmt.Errorf("lb_policy %q: want one of %s", p, strings.Join(lbPolicies, ", "))
	}
	return nil
}

// CheckHealthPath refuses an active health check path that is not a
// path; "" is the default and "off" turns the check off.
func CheckHealthPath(p string) error {
	if p != "" && p != "off" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#")) {
		return fmt.Errorf("health_path %q: want a path starting with /, or off", p)
	}
	return nil
}
