package fonts

import (
	"sync"
	"sync/atomic"
)

// coverage remembers which runes a font has a glyph for. Runes of the
// Basic Multilingual Plane are looked up 64 at a time, one bit each: text
// repeats the same few blocks, and a lookup per rune costs more than
// drawing it. Runes beyond it (emoji) are remembered one by one.
type coverage struct {
	once   sync.Once
	blocks []atomic.Uint64
	known  []atomic.Bool
	astral sync.Map // rune -> bool
}

func (c *coverage) has(r rune, lookup func(rune) bool) bool {
	if r < 0 || r > 0x10FFFF {
		return false
	}
	if r >= 0x10000 {
		if v, ok := c.astral.Load(r); ok {
			return v.(bool)
		}
		v := lookup(r)
		c.astral.Store(r, v)
		return v
	}
	c.once.Do(func() {
		c.blocks = make([]atomic.Uint64, 0x10000/64)
		c.known = make([]atomic.Bool, 0x10000/64)
	})
	b := r / 64
	if !c.known[b].Load() {
		var bits uint64
		for i := rune(0); i < 64; i++ {
			if lookup(b*64 + i) {
				bits |= 1 << i
			}
		}
		c.blocks[b].Store(bits)
		c.known[b].Store(true) // a racing caller stores the same bits
	}
	return c.blocks[b].Load()&(1<<(r%64)) != 0
}
