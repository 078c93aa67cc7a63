package chart

import (
	"image/color"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	stdfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/text/unicode/norm"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// Charts are set in the documents' family, Go Regular and Go Bold
// (tools/render/fonts), so that a chart folded into a PDF reads as part
// of it; their hyphen is the text hyphen documents use
// (fonts.WithTextHyphen). gonum/plot's own collection of twelve faces is
// not linked.
var (
	regularFont = font.Font{Typeface: "Go"}
	boldFont    = font.Font{Typeface: "Go", Weight: stdfont.WeightBold}
)

// handler returns the text handler shared by all renders. Font faces are
// read-only once parsed, so one handler serves concurrent renders. It
// panics if a compiled-in face does not parse, which a test would have
// caught first.
var handler = sync.OnceValue(func() text.Handler {
	var coll font.Collection
	for _, f := range []struct {
		font font.Font
		face fonts.Face
	}{{regularFont, fonts.GoRegular}, {boldFont, fonts.GoBold}} {
		ttf, err := fonts.WithTextHyphen(f.face.TTF())
		if err != nil {
			panic("chart: " + err.Error())
		}
		parsed, err := sfnt.Parse(ttf)
		if err != nil {
			panic("chart: " + err.Error())
		}
		coll = append(coll, font.Face{Font: f.font, Face: parsed})
	}
	return chainHandler{text.Plain{Fonts: font.NewCache(coll)}}
})

// textStyle returns a left-aligned, baseline-bottom style.
func textStyle(size vg.Length, bold bool, c color.Color) text.Style {
	f := regularFont
	if bold {
		f = boldFont
	}
	f.Size = size
	return text.Style{Color: c, Font: f, Handler: handler(), YAlign: text.YBottom}
}

// hasGlyph reports whether the chart font has a glyph for r.
func hasGlyph(r rune) bool {
	if r < 0 || r >= 0x10000 {
		return lookupGlyph(r)
	}
	// Runes of the Basic Multilingual Plane are looked up 64 at a time and
	// remembered, one bit each: labels repeat the same few blocks, and a
	// lookup per rune of every label costs more than drawing them.
	b := r / 64
	if !glyphBlockKnown[b].Load() {
		var bits uint64
		for i := rune(0); i < 64; i++ {
			if lookupGlyph(b*64 + i) {
				bits |= 1 << i
			}
		}
		glyphBlocks[b].Store(bits)
		glyphBlockKnown[b].Store(true) // a racing render stores the same bits
	}
	return glyphBlocks[b].Load()&(1<<(r%64)) != 0
}

var (
	glyphBlocks     [0x10000 / 64]atomic.Uint64
	glyphBlockKnown [0x10000 / 64]atomic.Bool
)

func lookupGlyph(r rune) bool {
	face := handler().Cache().Lookup(regularFont, 10)
	var buf sfnt.Buffer
	i, err := face.Face.GlyphIndex(&buf, r)
	return err == nil && i != 0
}

// clean makes s drawable on one line with the chart font: line breaks and
// tabs become spaces, runs of spaces collapse, and characters the font
// lacks are dropped when they are decoration (emoji, joiners, variation
// selectors) or shown as "?" when they carry meaning (letters of scripts
// the font does not cover), so that no glyph is drawn as an empty box.
func clean(s string) string {
	s = fonts.ShapeArabic(norm.NFC.String(s))
	if fonts.HasRTL(s) {
		rs, _ := fonts.Reorder(s, fonts.BaseRTL(s))
		s = string(rs)
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if unicode.Is(unicode.Cf, r) {
			continue // invisible format characters: joiners, marks, soft hyphens
		}
		if !hasGlyph(r) && (r == 0x20E3 || r >= 0xFE00 && r <= 0xFE0F || !fallbackHas(r)) {
			if unicode.In(r, unicode.So, unicode.Sk, unicode.Mn, unicode.Me, unicode.Cf, unicode.Co, unicode.Cs) {
				continue
			}
			r = '?'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fit returns s, shortened with an ellipsis if needed so that it is at
// most width wide in style sty.
func fit(s string, sty text.Style, width vg.Length) string {
	if sty.Width(s) <= width {
		return s
	}
	rs := []rune(s)
	// Binary search on the rune count: widths grow with the prefix.
	lo, hi := 0, len(rs)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sty.Width(strings.TrimRight(string(rs[:mid]), " ")+"…") <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return ""
	}
	return strings.TrimRight(string(rs[:lo]), " ") + "…"
}
