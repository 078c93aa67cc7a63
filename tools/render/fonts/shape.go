package fonts

import (
	"bytes"
	"os"
	"sync"

	"github.com/go-text/typesetting/di"
	gtfont "github.com/go-text/typesetting/font"
	ot "github.com/go-text/typesetting/font/opentype"
	"github.com/go-text/typesetting/language"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

// NeedsShaping reports whether s has letters of a script whose glyphs
// depend on their neighbours in ways a character-by-character drawing
// gets wrong: Indic scripts (vowel signs drawn before their consonant,
// conjuncts), Sinhala, Thai and Lao (stacked marks), Tibetan, Myanmar
// and Khmer (subscript consonants). Arabic is not among them: it is
// shaped through its presentation forms (ShapeArabic).
func NeedsShaping(s string) bool {
	for _, r := range s {
		if needsShaping(r) {
			return true
		}
	}
	return false
}

func needsShaping(r rune) bool {
	return r >= 0x0900 && r <= 0x0DFF || // Devanagari to Sinhala
		r >= 0x0E00 && r <= 0x0EFF || // Thai, Lao
		r >= 0x0F00 && r <= 0x109F || // Tibetan, Myanmar
		r >= 0x1780 && r <= 0x17FF || // Khmer
		r >= 0x19E0 && r <= 0x19FF || // Khmer symbols
		r >= 0xA8E0 && r <= 0xA8FF // Devanagari extended
}

// Pen receives a glyph outline, in the coordinates Shaped.Draw was given.
type Pen interface {
	MoveTo(x, y float64)
	LineTo(x, y float64)
	QuadTo(cx, cy, x, y float64)
	CubeTo(c1x, c1y, c2x, c2y, x, y float64)
	Close()
}

// Shaped is a run of text shaped with HarfBuzz's rules
// (go-text/typesetting) in one font at one size: its glyphs are the
// font's own, conjuncts and reordered vowel signs included, which
// drawing by character cannot reach.
type Shaped struct {
	fb      *Fallback
	scale   float64 // size per font unit
	glyphs  []placedGlyph
	Advance float64 // in the units of the size
}

type placedGlyph struct {
	id   gtfont.GID
	x, y float64 // origin from the run's start, y up
}

// Glyphs returns the number of glyphs drawn: fewer than the letters
// where a conjunct is formed.
func (s *Shaped) Glyphs() int { return len(s.glyphs) }

// Glyph returns glyph i's index in the font and its origin from the
// run's start (y up), so that a renderer can tell whether shaping did
// more than map each character to its glyph.
func (s *Shaped) Glyph(i int) (id uint32, x, y float64) {
	g := s.glyphs[i]
	return uint32(g.id), g.x, g.y
}

// Shape shapes s, left to right, in fb at size (any unit: the advance and
// the outlines come back in it). It reports false when fb cannot be read
// by the shaper; the caller then draws by character.
func Shape(fb *Fallback, s string, size float64) (*Shaped, bool) {
	face := fb.shapingFace()
	if face == nil || s == "" {
		return nil, false
	}
	defer fb.faces.Put(face)
	rs := []rune(s)
	script := language.Common
	for _, r := range rs {
		if sc := language.LookupScript(r); sc.Strong() {
			script = sc
			break
		}
	}
	// Shaping at the font's own units keeps every advance and offset
	// exact; they are scaled to size afterwards.
	upem := float64(face.Upem())
	sh := shapers.Get().(*shaping.HarfbuzzShaper)
	defer shapers.Put(sh)
	out := sh.Shape(shaping.Input{
		Text: rs, RunStart: 0, RunEnd: len(rs),
		Direction: di.DirectionLTR, Face: face,
		Size: fixed.I(int(upem)), Script: script,
	})
	res := &Shaped{fb: fb, scale: size / upem, glyphs: make([]placedGlyph, 0, len(out.Glyphs))}
	var pen float64
	for _, g := range out.Glyphs {
		res.glyphs = append(res.glyphs, placedGlyph{
			id: g.GlyphID,
			x:  (pen + fromFixed(g.XOffset)) * res.scale,
			y:  fromFixed(g.YOffset) * res.scale,
		})
		pen += fromFixed(g.XAdvance)
	}
	res.Advance = pen * res.scale
	return res, true
}

func fromFixed(v fixed.Int26_6) float64 { return float64(v) / 64 }

var shapers = sync.Pool{New: func() any { return new(shaping.HarfbuzzShaper) }}

// Draw sends the outlines of the run's glyphs to p, the run starting at
// (x, y) on its baseline. yDown is set for pictures whose y axis points
// down (images), clear for those whose y points up (gonum/plot).
func (s *Shaped) Draw(x, y float64, yDown bool, p Pen) {
	face := s.fb.shapingFace()
	if face == nil {
		return
	}
	defer s.fb.faces.Put(face)
	sy := s.scale
	if yDown {
		sy = -sy
	}
	for _, g := range s.glyphs {
		data, ok := face.GlyphData(g.id).(gtfont.GlyphOutline)
		if !ok {
			continue
		}
		gx := x + g.x
		gy := y + g.y
		if yDown {
			gy = y - g.y
		}
		pt := func(a ot.SegmentPoint) (float64, float64) {
			return gx + float64(a.X)*s.scale, gy + float64(a.Y)*sy
		}
		open := false
		for _, seg := range data.Segments {
			switch seg.Op {
			case ot.SegmentOpMoveTo:
				if open {
					p.Close()
				}
				p.MoveTo(pt(seg.Args[0]))
				open = true
			case ot.SegmentOpLineTo:
				p.LineTo(pt(seg.Args[0]))
			case ot.SegmentOpQuadTo:
				cx, cy := pt(seg.Args[0])
				ex, ey := pt(seg.Args[1])
				p.QuadTo(cx, cy, ex, ey)
			case ot.SegmentOpCubeTo:
				c1x, c1y := pt(seg.Args[0])
				c2x, c2y := pt(seg.Args[1])
				ex, ey := pt(seg.Args[2])
				p.CubeTo(c1x, c1y, c2x, c2y, ex, ey)
			}
		}
		if open {
			p.Close()
		}
	}
}

// shapingFace returns a go-text face of the font from the pool, nil if
// the file does not parse. Faces cache glyphs and are not safe for
// concurrent use; the parsed font under them is shared.
func (f *Fallback) shapingFace() *gtfont.Face {
	if face, ok := f.faces.Get().(*gtfont.Face); ok {
		return face
	}
	ft := f.shapingFont()
	if ft == nil {
		return nil
	}
	return gtfont.NewFace(ft)
}

func (f *Fallback) shapingFont() *gtfont.Font {
	f.gtOnce.Do(func() {
		b := f.TTF()
		if b == nil {
			var err error
			if b, err = os.ReadFile(f.Path); err != nil {
				return
			}
		}
		faces, err := gtfont.ParseTTC(bytes.NewReader(b))
		if err != nil || len(faces) == 0 {
			return
		}
		f.gtFont = faces[0].Font
	})
	return f.gtFont
}
