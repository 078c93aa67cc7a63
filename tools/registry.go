package tools

import (
	"fmt"
	"slices"
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
	// offers holds the Set of every Mode (Mode.index), made when a tool
	// is registered: a request's Offer then allocates nothing, where
	// building its Set anew left a few hundred bytes of garbage per /v3
	// request.
	offers [modes]Set
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
	for i := range r.offers {
		r.offers[i] = r.build(modeOf(i))
	}
	return nil
}

// modes is the number of distinct Modes: one bit per field.
const modes = 16

func (m Mode) index() int {
	i := 0
	for bit, on := range [...]bool{m.Files, m.Search, m.UserLinks, m.EndUser} {
		if on {
			i |= 1 << bit
		}
	}
	return i
}

func modeOf(i int) Mode {
	return Mode{Files: i&1 != 0, Search: i&2 != 0, UserLinks: i&4 != 0, EndUser: i&8 != 0}
}

// build returns the Set of m from the entries. Its slices are full, so
// that an append to them copies instead of writing into a Set that
// every request of the same mode shares.
func (r *Registry) build(m Mode) Set {
	var s Set
	for _, e := range r.entries {
		if m.allows(e.capability) {
			s.tools = append(s.tools, e.tool)
			s.caps = append(s.caps, e.capability)
		}
	}
	s.tools, s.caps = slices.Clip(s.tools), slices.Clip(s.caps)
	return s
}

// Offer returns the tools a request in mode m may call, in registration
// order. A nil Registry offers nothing. The Set is shared by every call
// with the same mode: it must not be changed.
func (r *Registry) Offer(m Mode) Set {
	if r == nil {
		return Set{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.offers[m.index()]
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
