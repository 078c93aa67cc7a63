package fonts

import (
	"image"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// ChainFace is a font.Face that draws each rune with the first of its
// faces that has a glyph for it: a bundled face first, then the system
// fallbacks, each made on first use. Kerning applies only between runes
// of the first face. Like the faces it holds, it is not safe for
// concurrent use.
type ChainFace struct {
	opts  *opentype.FaceOptions
	faces []font.Face // nil until first used
	has   []func(rune) bool
	load  func(i int) font.Face
}

// NewChainFace returns primary followed by the fallbacks, each at the
// given options.
func NewChainFace(primary *opentype.Font, opts *opentype.FaceOptions) (*ChainFace, error) {
	pf, err := opentype.NewFace(primary, opts)
	if err != nil {
		return nil, err
	}
	var cov coverage
	var buf sfnt.Buffer
	c := &ChainFace{opts: opts, faces: []font.Face{pf}, has: []func(rune) bool{func(r rune) bool {
		return cov.has(r, func(r rune) bool {
			g, err := primary.GlyphIndex(&buf, r)
			return err == nil && g != 0
		})
	}}}
	for _, fb := range Fallbacks() {
		c.faces = append(c.faces, nil)
		c.has = append(c.has, fb.Has)
	}
	c.load = func(i int) font.Face {
		fb := Fallbacks()[i-1]
		fnt := fb.Font()
		if fnt == nil {
			return nil
		}
		f, err := opentype.NewFace(fnt, c.opts)
		if err != nil {
			return nil
		}
		return f
	}
	return c, nil
}

// pick returns the face that draws r, the primary one if none does.
func (c *ChainFace) pick(r rune) font.Face {
	for i, has := range c.has {
		if !has(r) {
			continue
		}
		if c.faces[i] == nil {
			if c.faces[i] = c.load(i); c.faces[i] == nil {
				c.has[i] = func(rune) bool { return false }
				continue
			}
		}
		return c.faces[i]
	}
	return c.faces[0]
}

// Has reports whether any face of the chain draws r.
func (c *ChainFace) Has(r rune) bool {
	for _, has := range c.has {
		if has(r) {
			return true
		}
	}
	return false
}

func (c *ChainFace) Close() error {
	for _, f := range c.faces {
		if f != nil {
			f.Close()
		}
	}
	return nil
}

func (c *ChainFace) Glyph(dot fixed.Point26_6, r rune) (image.Rectangle, image.Image, image.Point, fixed.Int26_6, bool) {
	return c.pick(r).Glyph(dot, r)
}

func (c *ChainFace) GlyphBounds(r rune) (fixed.Rectangle26_6, fixed.Int26_6, bool) {
	return c.pick(r).GlyphBounds(r)
}

func (c *ChainFace) GlyphAdvance(r rune) (fixed.Int26_6, bool) {
	return c.pick(r).GlyphAdvance(r)
}

func (c *ChainFace) Kern(r0, r1 rune) fixed.Int26_6 {
	if !c.has[0](r0) || !c.has[0](r1) {
		return 0
	}
	return c.faces[0].Kern(r0, r1)
}

func (c *ChainFace) Metrics() font.Metrics { return c.faces[0].Metrics() }
