// Package routing sends a request for a model to the pool of upstreams
// that serves it, and on to the model's fallbacks while no pool has
// answered. It holds what routing decides, not how a pool reaches its
// upstreams: caddymodules implements Pool over Caddy's reverse_proxy,
// with its load balancing, health checks and retries, which it builds
// from the models' config here (Model, its checks and defaults, and the
// reverse_proxy JSON a pool's config comes to).
package routing

import "net/http"

// Pool is one model's pool of upstreams.
type Pool interface {
	// Model is the name of the model the pool serves.
	Model() string
	// ServeHTTP serves r from one of the pool's upstreams. An error
	// returned with nothing written is the pool's failure to answer.
	ServeHTTP(w http.ResponseWriter, r *http.Request) error
}

// Named is a pool as a Table knows it: by its model's name.
type Named interface{ Model() string }

// Table is the configured models' pools by name, with their fallbacks.
type Table[P Named] struct {
	byName    map[string]P
	order     []P // as configured, for model lists
	fallbacks map[string][]string
	// chains is Chain's answer per model, made again by every Add (a
	// fallback may be added after the model that names it), so that a
	// request's lookup allocates nothing.
	chains map[string][]P
}

// Add adds pool p, whose model falls back to fallbacks in order.
func (t *Table[P]) Add(p P, fallbacks []string) {
	if t.byName == nil {
		t.byName = make(map[string]P)
		t.fallbacks = make(map[string][]string)
	}
	t.byName[p.Model()] = p
	t.fallbacks[p.Model()] = fallbacks
	t.order = append(t.order, p)
	t.chains = make(map[string][]P, len(t.byName))
	for model, own := range t.byName {
		chain := []P{own}
		for _, f := range t.fallbacks[model] {
			if fp, ok := t.byName[f]; ok {
				chain = append(chain, fp)
			}
		}
		// Full, so that an append by a caller copies it.
		t.chains[model] = chain[:len(chain):len(chain)]
	}
}

// Pools lists the pools in the order they were added.
func (t *Table[P]) Pools() []P { return t.order }

// Chain is the pools a request for model goes to, in order: the model's
// own, then its fallbacks'. ok is false for a model not configured. The
// slice is the table's, shared by every request for model: it must not
// be changed.
func (t *Table[P]) Chain(model string) (chain []P, ok bool) {
	chain, ok = t.chains[model]
	return chain, ok
}

// Has reports whether model is configured.
func (t *Table[P]) Has(model string) bool {
	_, ok := t.byName[model]
	return ok
}

// Names lists the configured models in their configured order.
func (t *Table[P]) Names() []string {
	out := make([]string, len(t.order))
	for i, p := range t.order {
		out[i] = p.Model()
	}
	return out
}
