package files

import (
	"bytes"
	"unicode/utf8"
)

// textCheck validates, across arbitrary chunk boundaries, that a stream
// is UTF-8 text without NUL bytes. Its zero value is ready for use.
type textCheck struct {
	bad     bool
	pending [utf8.UTFMax]byte // start of a character split by a chunk boundary
	npend   int
}

func (c *textCheck) valid() bool { return !c.bad && c.npend == 0 }

func (c *textCheck) write(p []byte) {
	if c.bad || len(p) == 0 {
		return
	}
	if bytes.IndexByte(p, 0) >= 0 {
		c.bad = true
		return
	}
	if c.npend > 0 {
		need := seqLen(c.pending[0])
		take := min(need-c.npend, len(p))
		c.npend += copy(c.pending[c.npend:need], p[:take])
		p = p[take:]
		if c.npend < need {
			return
		}
		if !utf8.Valid(c.pending[:need]) {
			c.bad = true
			return
		}
		c.npend = 0
	}
	tail := incompleteTail(p)
	if !utf8.Valid(p[:len(p)-tail]) {
		c.bad = true
		return
	}
	c.npend = copy(c.pending[:], p[len(p)-tail:])
}

// seqLen is the length of the UTF-8 sequence that lead byte b starts
// (1 for bytes that cannot start one; utf8.Valid rejects those).
func seqLen(b byte) int {
	switch {
	case b >= 0xF0 && b <= 0xF7:
		return 4
	case b >= 0xE0:
		return 3
	case b >= 0xC0:
		return 2
	}
	return 1
}

// incompleteTail is the length of a multi-byte sequence that starts in
// the last three bytes of p but does not end in p.
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if len(p)-i < seqLen(p[i]) {
				return len(p) - i
			}
			return 0
		}
	}
	return 0
}
