package telemetry

import (
	"maps"
	"sync"
	"sync/atomic"
)

// children keeps the series of a vector by their label values, once
// looked up: a request's observations then skip the vector's hash of
// its labels, their UTF-8 check and its lock. Reads take no lock; a miss
// copies the map, which happens once per series (no series of these
// vectors is ever deleted, so a kept one stays the vector's).
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

// lazy is one series of a vector, looked up on its first observation and
// kept: where the label values are known in advance (a route, a decision,
// a kind of tokens), the series is found by index, with no hash at all.
// Two first observations at once may both look it up; the vector gives
// both the same series.
type lazy[C any] struct{ p atomic.Pointer[C] }

// get is the series, looked up by with the first time.
func (l *lazy[C]) get(with func() C) C {
	if p := l.p.Load(); p != nil {
		return *p
	}
	c := with()
	l.p.Store(&c)
	return c
}
