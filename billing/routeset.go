package billing

import (
	"sync"
	"sync/atomic"
)

// RouteSet is a config's Routes as its handlers register theirs while
// they are provisioned, read on every request without a lock. Make one
// with NewRouteSet.
type RouteSet struct {
	mu        sync.Mutex // serialises registrations
	routes    atomic.Pointer[Routes]
	base      Routes
	uploads   []string
	responses []string
}

// NewRouteSet is a set of the /v3 chat and Responses paths, before any
// upload or /v1 Responses route is registered.
func NewRouteSet(chat, assistantResponses string) *RouteSet {
	s := &RouteSet{base: Routes{Chat: chat, AssistantResponses: assistantResponses}}
	s.routes.Store(&s.base)
	return s
}

// AddUpload registers a path that takes Files API uploads, when a
// switchyard_files handler is provisioned.
func (s *RouteSet) AddUpload(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploads = append(s.uploads, path)
	s.store()
}

// AddResponses registers the path of a /v1 Responses API route, when a
// switchyard_proxy that serves one is provisioned.
func (s *RouteSet) AddResponses(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responses = append(s.responses, path)
	s.store()
}

// Load is the routes registered so far.
func (s *RouteSet) Load() *Routes { return s.routes.Load() }

// store publishes the routes registered so far; s.mu is held. The slices
// are capped, so that a later registration never writes into what a
// request is reading.
func (s *RouteSet) store() {
	rt := s.base
	rt.Uploads = s.uploads[:len(s.uploads):len(s.uploads)]
	rt.Responses = s.responses[:len(s.responses):len(s.responses)]
	s.routes.Store(&rt)
}
