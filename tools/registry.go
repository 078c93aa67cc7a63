package tools

import (
	"fmt"
	"sync"
)

// Capability says under which output mode (spec 4.1) a tool is offered.
type Capability uint8

const (
	// Always: offered to every request.
	Always Capability = iota
	// FileOutput: tools that produce or change deliverables. Offered only
	// when the request's modalities include "files", so that a text-only
	// request cannot produce a file at all.
	FileOutput
	// WebSearch: autonomous searching. Not offered with skip_search.
	WebSearch
	// OpenURL: opening a page. Offered unless skip_search is set; with
	// skip_search only when the user's messages hold links, and the tool
	// must then open only those (Env.Links).
	OpenURL
	// EndUserMemory: per-end-user memory. Offered only when the request
	// names an end user.
	EndUserMemory
)

// Mode is what a request allows.
type Mode struct {
	Files     bool // modalities include "files"
	Search    bool // skip_search is not set
	UserLinks bool // the user's messages contain http(s) links
	EndUser   bool // an end-user id is known
}

// allows reports whether a tool of capability c is offered under m.
func (m Mode) allows(c Capability) bool {
	switch c {
	case Always:
		return true
	case FileOutput:
		return m.Files
	case WebSearch:
		return m.Search
	case OpenURL:
		return m.Search || m.UserLinks
	case EndUserMemory:
		return m.EndUser
	}
	return false
}

// Registry is the set of tools a server knows. Register everything during
// setup; Offer and Lookup are safe for concurrent use with each other and
// with Register. The zero value is an empty registry ready for use.
type Registry struct {
	mu      sync.RWMutex
	entries []entry
}

type entry struct {
	capability Capability
	tool       Tool
}

// Register adds t, offered under capability c. Names are unique.
func (r *Registry) Register(c Capability, t Tool) error {
	if t == nil || t.Name() == "" {
		return fmt.Errorf("tools: registering a tool without a name")
	}
	if c > EndUserMemory {
		return fmt.Errorf("tools: %s: unknown capability %d", t.Name(), c)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.tool.Name() == t.Name() {
			return fmt.Errorf("tools: %s registered twice", t.Name())
		}
	}
	r.entries = append(r.entries, entry{capability: c, tool: t})
	return nil
}

// Offer returns the tools a request in mode m may call, in registration
// order. A nil Registry offers nothing.
func (r *Registry) Offer(m Mode) Set {
	if r == nil {
		return Set{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var s Set
	for _, e := range r.entries {
		if m.allows(e.capability) {
			s.tools = append(s.tools, e.tool)
			s.caps = append(s.caps, e.capability)
		}
	}
	return s
}

// Set is the tools offered to one request. Calls are looked up only in
// the Set, never in the Registry, so that a model cannot reach a tool its
// request's mode switched off by guessing its name.
type Set struct {
	tools []Tool
	caps  []Capability // caps[i] is the capability tools[i] was registered with
}

// Tools returns the offered tools in order.
func (s Set) Tools() []Tool { return s.tools }

// Len is the number of offered tools.
func (s Set) Len() int { return len(s.tools) }

// Lookup finds an offered tool by name.
func (s Set) Lookup(name string) (Tool, bool) {
	for _, t := range s.tools {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Capability returns the capability an offered tool was registered
// with, and false when no tool of that name is offered.
func (s Set) Capability(name string) (Capability, bool) {
	for i, t := range s.tools {
		if t.Name() == name {
			return s.caps[i], true
		}
	}
	return 0, false
}

// Names lists the offered tool names in order.
func (s Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}
