package caddymodules

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/routing"
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
	HealthInterval caddy.Duration `json:"health_interval,omitempty"`

	// Longest a check may take before it counts as failed. Default: 5s.
	HealthTimeout caddy.Duration `json:"health_timeout,omitempty"`

	// How long a failure counts against an upstream (passive health):
	// a refused connection, a missing response, a 5xx or 429 answer,
	// or one slower than unhealthy_latency. Default: 10s.
	FailDuration caddy.Duration `json:"fail_duration,omitempty"`

	// Failures within fail_duration that take an upstream out of the
	// pool until they expire. Default: 1.
	MaxFails int `json:"max_fails,omitempty"`

	// Response headers slower than this count as a failure. Default: 0,
	// latency is not judged.
	UnhealthyLatency caddy.Duration `json:"unhealthy_latency,omitempty"`

	// Answer statuses that count as a failure of the upstream, besides
	// being retried: a status, or a class such as 5 for every 5xx. An
	// empty list (Caddyfile: none) counts none, so that a request the
	// backends all answer 500 cannot take every upstream out of the
	// pool; the retry may then choose the same upstream again under
	// every policy but round_robin. Default: 5xx and 429.
	UnhealthyStatus *[]int `json:"unhealthy_status,omitempty"`

	// Longest wait for a connection to an upstream. Default: 10s.
	DialTimeout caddy.Duration `json:"dial_timeout,omitempty"`

	// Longest wait, once the request is sent, for an upstream's
	// response headers; past it the next upstream is tried. Default:
	// 120s.
	ResponseHeaderTimeout caddy.Duration `json:"response_header_timeout,omitempty"`

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

// resolve resolves the upstream u of model m: placeholders replaced,
// the URL taken apart.
func (u *ModelUpstream) resolve(repl *caddy.Replacer, m *Model) (routing.Upstream, error) {
	return routing.ParseUpstream(m.Name, repl.ReplaceAll(u.URL, ""), repl.ReplaceAll(u.APIKey, ""), u.Model, u.Name, u.Weight)
}

// validateModels checks the models block as a whole: names, upstreams,
// policies and fallbacks that name configured models.
func validateModels(models []*Model, prices map[string]policy.ModelPrice) error {
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
		errs = append(errs, m.validate(names, prices))
	}
	return errors.Join(errs...)
}

func (m *Model) validate(names map[string]bool, prices map[string]policy.ModelPrice) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("model %q: %s", m.Name, fmt.Sprintf(format, args...))
	}
	var errs []error
	if len(m.Upstreams) == 0 {
		errs = append(errs, fail("needs at least one upstream"))
	}
	repl := caddy.NewReplacer()
	upNames := make(map[string]bool)
	for _, u := range m.Upstreams {
		if u == nil {
			errs = append(errs, fail("empty upstream"))
			continue
		}
		r, err := u.resolve(repl, m)
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
	if m.LBPolicy != "" && !slices.Contains(lbPolicies, m.LBPolicy) {
		errs = append(errs, fail("lb_policy %q: want one of %s", m.LBPolicy, strings.Join(lbPolicies, ", ")))
	}
	if m.Retries != nil && *m.Retries < 0 {
		errs = append(errs, fail("retries must not be negative"))
	}
	if p := m.HealthPath; p != "" && p != "off" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#")) {
		errs = append(errs, fail("health_path %q: want a path starting with /, or off", p))
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

// applyModelPrices adds the models' prices to the profile's per-model
// prices, the ones limits' price sets, and the hold prices of their
// fallback chains.
func applyModelPrices(p *policy.Profile, models []*Model) {
	priced := make([]routing.Priced, 0, len(models))
	for _, m := range models {
		if m != nil {
			priced = append(priced, routing.Priced{Name: m.Name, Price: m.Price, Fallbacks: m.Fallbacks})
		}
	}
	routing.ApplyPrices(p, priced)
}

// unmarshalModel reads a model block. Syntax:
//
//	model <name> {
//		upstream <base_url> [{
//			api_key <key>
//			model   <upstream model name>
//			weight  <n>
//			name    <name>
//		}]
//		lb_policy               round_robin|least_conn|weighted_round_robin|first|random
//		retries                 <n>
//		health_path             <path>|off
//		health_interval         <duration>
//		health_timeout          <duration>
//		fail_duration           <duration>
//		max_fails               <n>
//		unhealthy_latency       <duration>
//		unhealthy_status        <status>...|none
//		dial_timeout            <duration>
//		response_header_timeout <duration>
//		price                   <input usd per 1M tokens> <output usd per 1M tokens>
//		fallback                <model>...
//	}
func unmarshalModel(d *caddyfile.Dispenser) (*Model, error) {
	m := new(Model)
	if err := oneArg(d, &m.Name); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		switch opt {
		case "upstream":
			u, err := unmarshalModelUpstream(d)
			if err != nil {
				return nil, err
			}
			m.Upstreams = append(m.Upstreams, u)
		case "fallback":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			m.Fallbacks = append(m.Fallbacks, args...)
		case "price":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return nil, d.ArgErr()
			}
			mp, err := parsePrice(args[0], args[1])
			if err != nil {
				return nil, d.Errf("price: %v", err)
			}
			m.Price = &mp
		case "unhealthy_status":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			codes := []int{}
			for _, a := range args {
				if a == "none" && len(args) == 1 {
					break
				}
				c, err := strconv.Atoi(strings.TrimSuffix(a, "xx"))
				if err != nil {
					return nil, d.Errf("unhealthy_status: want statuses such as 5xx or 429, or none, not %q", a)
				}
				codes = append(codes, c)
			}
			m.UnhealthyStatus = &codes
		case "lb_policy":
			if err := oneArg(d, &m.LBPolicy); err != nil {
				return nil, err
			}
			if !slices.Contains(lbPolicies, m.LBPolicy) {
				return nil, d.Errf("lb_policy %q: want one of %s", m.LBPolicy, strings.Join(lbPolicies, ", "))
			}
		case "health_path":
			if err := oneArg(d, &m.HealthPath); err != nil {
				return nil, err
			}
			if p := m.HealthPath; p != "off" && (!strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#")) {
				return nil, d.Errf("health_path %q: want a path starting with /, or off", p)
			}
		case "retries", "max_fails":
			var v string
			if err := oneArg(d, &v); err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, d.Errf("%s: want a whole number, not %q", opt, v)
			}
			if opt == "retries" {
				m.Retries = &n
			} else {
				m.MaxFails = n
			}
		case "health_interval", "health_timeout", "fail_duration", "unhealthy_latency", "dial_timeout", "response_header_timeout":
			dst := map[string]*caddy.Duration{
				"health_interval":         &m.HealthInterval,
				"health_timeout":          &m.HealthTimeout,
				"fail_duration":           &m.FailDuration,
				"unhealthy_latency":       &m.UnhealthyLatency,
				"dial_timeout":            &m.DialTimeout,
				"response_header_timeout": &m.ResponseHeaderTimeout,
			}[opt]
			if err := positiveDurationArg(d, dst); err != nil {
				return nil, err
			}
		default:
			return nil, d.Errf("unrecognized model option %q", opt)
		}
	}
	return m, nil
}

func unmarshalModelUpstream(d *caddyfile.Dispenser) (*ModelUpstream, error) {
	u := new(ModelUpstream)
	if err := oneArg(d, &u.URL); err != nil {
		return nil, err
	}
	if err := checkLiteral(u.URL, checkURL("http://10.0.0.7:8000/v1", "http", "https")); err != nil {
		return nil, d.Errf("upstream: %v", err)
	}
	err := blockOptions(d, d.Nesting(), "model upstream", map[string]optionReader{
		"api_key": stringOption(&u.APIKey),
		"model":   stringOption(&u.Model),
		"name":    stringOption(&u.Name),
		"weight":  positiveIntOption(&u.Weight),
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
