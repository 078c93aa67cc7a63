package translator

import (
	"bytes"
	"sync"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/translator/upstream"
)

// offeredTools is what a round sends of the tools a request is offered:
// their definitions and those encoded as the body's JSON array.
type offeredTools struct {
	defs []upstream.ToolDefinition
	json []byte
}

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
func (c *toolSets) of(offered []tools.Tool) *offeredTools {
	if len(offered) == 0 {
		return &offeredTools{}
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
	if kept != nil && kept.describes(offered) {
		return kept
	}
	defs := make([]upstream.ToolDefinition, len(offered))
	for i, t := range offered {
		defs[i] = upstream.ToolDefinition{Type: "function", Function: upstream.FunctionSpec{
			Name: t.Name(), Description: t.Description(), Parameters: t.Schema(),
		}}
	}
	ot := &offeredTools{defs: defs, json: upstream.EncodeTools(defs)}
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
