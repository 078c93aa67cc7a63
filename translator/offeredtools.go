package translator

import (
	"bytes"
	"sync"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// offeredTools is the tools a request is offered, and what a round sends
// of them: their definitions and those encoded as the body's JSON array.
type offeredTools struct {
	set  tools.Set
	defs []upstream.ToolDefinition
	json []byte
}

// noTools is the offeredTools of a request offered none.
var noTools = &offeredTools{}

// maxToolSets bounds the sets toolSets keeps. A set is a combination of
// the modes' capabilities, a handful in practice.
const maxToolSets = 64

// toolSets keeps the offeredTools of each set of tools offered so far.
// The schemas are most of a short chat's upstream body, the same for
// every request offered the same tools: encoding them once per set
// instead of once per round spares each request as many bytes of
// garbage, and a turn refers to the shared definitions instead of
// holding a copy for as long as it streams.
type toolSets struct {
	mu   sync.Mutex
	sets map[string]*offeredTools
}

// of returns the offeredTools of offered. A set kept under the same
// names is used only if each tool's definition is still what it was.
func (c *toolSets) of(offered []tools.Tool) *offeredTools { return c.get(offered, tools.Set{}) }

// forSet is of for the tools of set, whose offeredTools holds a set of
// the same tools: a turn keeps that one instead of its own. Within one
// Orchestrator, and so one Registry, a name is one tool, registered once
// with its capability.
func (c *toolSets) forSet(set tools.Set) *offeredTools { return c.get(set.Tools(), set) }

func (c *toolSets) get(offered []tools.Tool, set tools.Set) *offeredTools {
	if len(offered) == 0 {
		return noTools
	}
	// The key is looked up without a string of its own: a request
	// offered a set kept already allocates nothing here.
	var room [256]byte
	key := room[:0]
	for _, t := range offered {
		key = append(key, t.Name()...)
		key = append(key, 0)
	}
	c.mu.Lock()
	kept := c.sets[string(key)]
	c.mu.Unlock()
	if kept != nil && kept.describes(offered) && kept.set.Len() == set.Len() {
		return kept
	}
	defs := make([]upstream.ToolDefinition, len(offered))
	for i, t := range offered {
		defs[i] = upstream.ToolDefinition{Type: "function", Function: upstream.FunctionSpec{
			Name: t.Name(), Description: t.Description(), Parameters: t.Schema(),
		}}
	}
	ot := &offeredTools{set: set, defs: defs, json: upstream.EncodeTools(defs)}
	c.mu.Lock()
	if c.sets == nil {
		c.sets = map[string]*offeredTools{}
	}
	if _, ok := c.sets[string(key)]; ok || len(c.sets) < maxToolSets {
		c.sets[string(key)] = ot
	}
	c.mu.Unlock()
	return ot
}

func (ot *offeredTools) describes(offered []tools.Tool) bool {
	if len(ot.defs) != len(offered) {
		return false
	}
	for i, t := range offered {
		f := ot.defs[i].Function
		if f.Name != t.Name() || f.Description != t.Description() || !bytes.Equal(f.Parameters, t.Schema()) {
			return false
		}
	}
	return true
}
