package telemetry

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// children keeps the series every request touches, found once by their
// labels: WithLabelValues checks and hashes every label value on each
// call, which a request paid seven times. No series of these collectors
// is ever deleted, so a child found once stays the one the collector
// exports. Keys are small structs: a lookup allocates nothing.
type children struct {
	mu        sync.RWMutex
	requests  map[requestKey]prometheus.Counter
	timing    map[timingKey]timingSeries
	decisions map[string]prometheus.Counter
	charges   map[string]chargeSeries
}

type requestKey struct {
	route  string
	status int
	code   string
}

type timingKey struct{ route, model string }

type timingSeries struct{ duration, firstByte prometheus.Observer }

type chargeSeries struct{ prompt, completion, cents prometheus.Counter }

func newChildren() *children {
	return &children{
		requests:  make(map[requestKey]prometheus.Counter),
		timing:    make(map[timingKey]timingSeries),
		decisions: make(map[string]prometheus.Counter),
		charges:   make(map[string]chargeSeries),
	}
}

// cached is the value of key in the map of c that at selects, made by
// make and kept the first time. A nil c (collectors registered nowhere)
// keeps nothing.
func cached[K comparable, V any](c *children, at func(*children) map[K]V, key K, make func() V) V {
	if c == nil {
		return make()
	}
	c.mu.RLock()
	v, ok := at(c)[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = make()
	c.mu.Lock()
	at(c)[key] = v
	c.mu.Unlock()
	return v
}

func (m *Metrics) requestCounter(route string, status int, code string) prometheus.Counter {
	return cached(m.children, func(c *children) map[requestKey]prometheus.Counter { return c.requests },
		requestKey{route, status, code}, func() prometheus.Counter {
			return m.requests.WithLabelValues(route, strconv.Itoa(status), code)
		})
}

func (m *Metrics) timingSeries(route, model string) timingSeries {
	return cached(m.children, func(c *children) map[timingKey]timingSeries { return c.timing },
		timingKey{route, model}, func() timingSeries {
			return timingSeries{m.duration.WithLabelValues(route, model), m.firstByte.WithLabelValues(route, model)}
		})
}

func (m *Metrics) decisionCounter(decision string) prometheus.Counter {
	return cached(m.children, func(c *children) map[string]prometheus.Counter { return c.decisions },
		decision, func() prometheus.Counter { return m.admissions.WithLabelValues(decision) })
}

func (m *Metrics) chargeSeries(route string) chargeSeries {
	return cached(m.children, func(c *children) map[string]chargeSeries { return c.charges },
		route, func() chargeSeries {
			return chargeSeries{m.tokens.WithLabelValues(route, "prompt"), m.tokens.WithLabelValues(route, "completion"),
				m.cents.WithLabelValues(route)}
		})
}
