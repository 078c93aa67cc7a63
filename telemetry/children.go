package telemetry

import (
	"maps"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// children keeps the series of a vector by their label values, once
// looked up: a request's observations then skip the vector's hash of
// its labels, their UTF-8 check and its lock. Reads take no lock; a miss
// copies the map, which happens once per series (no series of these
// vectors is ever deleted, so a kept one stays the vector's). The key
// holds the vector too: a Metrics copied for another registry may hold
// another vector (Reuse) and shares its children with the original.
type children[K comparable, C any] struct {
	m  atomic.Pointer[map[K]C]
	mu sync.Mutex // held by the writers of m
}

// get is the series of key, made by with on the first look-up.
func (c *children[K, C]) get(key K, with func(K) C) C {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[key]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[key]; ok {
			return v
		}
	}
	v := with(key)
	var m map[K]C
	if old != nil {
		m = maps.Clone(*old)
	}
	if m == nil {
		m = make(map[K]C, 1)
	}
	m[key] = v
	c.m.Store(&m)
	return v
}

// Keys of the vectors' series by their number of labels.
type (
	counterKey1 struct {
		vec *prometheus.CounterVec
		a   string
	}
	counterKey2 struct {
		vec  *prometheus.CounterVec
		a, b string
	}
	counterKey3 struct {
		vec     *prometheus.CounterVec
		a, b, c string
	}
	observerKey2 struct {
		vec  *prometheus.HistogramVec
		a, b string
	}
)

// seriesCache holds the series of a request's and a charge's
// observations (Metrics.series); nil looks every one up in its vector.
type seriesCache struct {
	counters1  children[counterKey1, prometheus.Counter]
	counters2  children[counterKey2, prometheus.Counter]
	counters3  children[counterKey3, prometheus.Counter]
	observers2 children[observerKey2, prometheus.Observer]
}

func (s *seriesCache) counter1(vec *prometheus.CounterVec, a string) prometheus.Counter {
	if s == nil {
		return vec.WithLabelValues(a)
	}
	return s.counters1.get(counterKey1{vec, a}, func(k counterKey1) prometheus.Counter {
		return k.vec.WithLabelValues(k.a)
	})
}

func (s *seriesCache) counter2(vec *prometheus.CounterVec, a, b string) prometheus.Counter {
	if s == nil {
		return vec.WithLabelValues(a, b)
	}
	return s.counters2.get(counterKey2{vec, a, b}, func(k counterKey2) prometheus.Counter {
		return k.vec.WithLabelValues(k.a, k.b)
	})
}

func (s *seriesCache) counter3(vec *prometheus.CounterVec, a, b, c string) prometheus.Counter {
	if s == nil {
		return vec.WithLabelValues(a, b, c)
	}
	return s.counters3.get(counterKey3{vec, a, b, c}, func(k counterKey3) prometheus.Counter {
		return k.vec.WithLabelValues(k.a, k.b, k.c)
	})
}

func (s *seriesCache) observer2(vec *prometheus.HistogramVec, a, b string) prometheus.Observer {
	if s == nil {
		return vec.WithLabelValues(a, b)
	}
	return s.observers2.get(observerKey2{vec, a, b}, func(k observerKey2) prometheus.Observer {
		return k.vec.WithLabelValues(k.a, k.b)
	})
}
