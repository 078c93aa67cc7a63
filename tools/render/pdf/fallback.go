package pdf

import (
	"bytes"
	"math"
	"strconv"
	"sync"
	"unicode"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// fallbackFont is a system font (tools/render/fonts) that sets the
// characters the document's own faces lack: CJK, Hebrew, Arabic,
// Devanagari, Thai and the like. Only TrueType fonts qualify, the kind
// fpdf embeds, and only the Basic Multilingual Plane, which fpdf
// addresses. A fallback has one face: bold and italic text in a script
// the document faces lack is set upright and regular.
type fallbackFont struct {
	src *fonts.Fallback

	mu     sync.Mutex
	widths map[rune]uint16         // thousandths of the size; 0: no glyph
	shaped map[string]shapeInfo    // runs measured by the shaper (outline.go)
	inked  map[rune]bool           // whether a glyph has an outline (outline.go)
	paths  map[uint32]glyphOutline // glyph outlines as PDF paths (outline.go)
}

var pdfFallbacks = sync.OnceValue(func() []*fallbackFont {
	var out []*fallbackFont
	for _, fb := range fonts.Fallbacks() {
		if fb.TrueType && len(out) < math.MaxUint8 {
			out = append(out, &fallbackFont{src: fb, widths: map[rune]uint16{}})
		}
	}
	return out
})

// width returns r's advance in thousandths of the font size, 0 when the
// font has no glyph for it.
func (f *fallbackFont) width(r rune) int {
	if r >= 0x10000 {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w, ok := f.widths[r]; ok {
		return int(w)
	}
	w := 0
	if fnt := f.src.Font(); fnt != nil && f.src.Has(r) {
		var buf sfnt.Buffer
		if g, err := fnt.GlyphIndex(&buf, r); err == nil && g != 0 {
			upem := fnt.UnitsPerEm()
			if adv, err := fnt.GlyphAdvance(&buf, g, fixed.Int26_6(upem)<<6, 0); err == nil {
				w = max(1, int(math.Round(1000*float64(adv)/64/float64(upem))))
			}
		}
	}
	f.widths[r] = uint16(min(w, math.MaxUint16))
	return w
}

// family is the name fpdf knows fallback k (1-based) by.
func fallbackFamily(k uint8) string { return "Fallback" + strconv.Itoa(int(k)) }

// fallbackFor returns the 1-based index of the first fallback that draws
// r, or 0 when none does. A character beyond the Basic Multilingual
// Plane is drawn as an outline (outline.go), so its font must have one.
func fallbackFor(r rune) uint8 {
	for i, f := range pdfFallbacks() {
		if f.src.Has(r) && (r < 0x10000 || f.inks(r)) {
			return uint8(i + 1)
		}
	}
	return 0
}

// drawable reports whether some face, own or fallback, draws r.
func (m *metrics) drawable(r rune) bool {
	return r < 0x10000 && m.covered[r] || fallbackFor(r) != 0
}

// fontOf returns the fallback (0: the style's own face) that sets r in
// face fc, given the one the rune before it was set in: a combining mark
// stays with its letter when that font has it.
func (m *metrics) fontOf(fc face, r, prev rune, prevFB uint8) uint8 {
	if (r == zwj || r == zwnj) && prevFB != 0 {
		return prevFB // a joiner is read by the shaper of its run
	}
	if unicode.In(r, unicode.Mn, unicode.Me) && prev != 0 {
		if prevFB == 0 && r < 0x10000 && m.widths[fc][r] > 0 {
			return 0
		}
		if prevFB != 0 && pdfFallbacks()[prevFB-1].width(r) > 0 {
			return prevFB
		}
	}
	if r < 0x10000 && m.widths[fc][r] > 0 {
		return 0
	}
	return fallbackFor(r)
}

// styleWidth returns the width of s set in st, which may name a fallback.
func (m *metrics) styleWidth(st style, s string) float64 {
	if st.fb == 0 {
		return m.width(st.face, st.size, s)
	}
	if w, ok := m.shapedWidth(st, s); ok {
		return w
	}
	f := pdfFallbacks()[st.fb-1]
	sum := 0
	for _, r := range s {
		if w := f.width(r); w > 1 {
			sum += w
		}
	}
	return float64(sum) * st.size / 1000
}

func (m *metrics) styleRuneWidth(st style, r rune) float64 {
	if st.fb == 0 {
		return m.runeWidth(st.face, st.size, r)
	}
	if r >= 0x10000 {
		w, _ := m.shapedWidth(st, string(r))
		return w
	}
	w := pdfFallbacks()[st.fb-1].width(r)
	if w <= 1 {
		return 0
	}
	return float64(w) * st.size / 1000
}

// splitFonts cuts a word into pieces by the font each character is set
// in, so that a line of mixed scripts switches fonts mid-word.
func (m *metrics) splitFonts(word string, st style) []item {
	if isPlain(word) {
		st.fb = 0
		return []item{{text: word, st: st, w: m.width(st.face, st.size, word)}}
	}
	var out []item
	start := 0
	var prev rune
	cur := uint8(0)
	first := true
	for i, r := range word {
		fb := m.fontOf(st.face, r, prev, cur)
		if !first && fb != cur {
			s := st
			s.fb = cur
			out = append(out, item{text: word[start:i], st: s, w: m.styleWidth(s, word[start:i])})
			start = i
		}
		cur, prev, first = fb, r, false
	}
	s := st
	s.fb = cur
	out = append(out, item{text: word[start:], st: s, w: m.styleWidth(s, word[start:])})
	return out
}

// addFallback embeds fallback k in the document on first use.
func (r *renderer) addFallback(k uint8) {
	if r.addedFB == nil {
		r.addedFB = map[uint8]bool{}
	}
	if r.addedFB[k] {
		return
	}
	r.addedFB[k] = true
	r.pdf.AddUTF8FontFromBytes(fallbackFamily(k), "", bytes.Clone(pdfFallbacks()[k-1].src.TTF()))
}

// visual returns l with its characters in display order when it holds
// right-to-left text (fonts.Reorder), its frags regrouped by style;
// other lines come back as they are. rtl reports whether the line reads
// from right to left, so that it is set flush right.
func (m *metrics) visual(l line) (out line, rtl bool) {
	anyRTL := false
	for _, f := range l.frags {
		if fonts.HasRTL(f.text) {
			anyRTL = true
			break
		}
	}
	if !anyRTL {
		return l, false
	}
	var text []rune
	var styles []style
	for _, f := range l.frags {
		for _, r := range f.text {
			text = append(text, r)
			styles = append(styles, f.st)
		}
	}
	rtl = fonts.BaseRTL(string(text))
	rs, order := fonts.Reorder(string(text), rtl)
	for i := 0; i < len(rs); {
		st := styles[order[i]]
		j := i + 1
		for j < len(rs) && styles[order[j]] == st {
			j++
		}
		s := string(rs[i:j])
		w := m.styleWidth(st, s)
		out.frags = append(out.frags, frag{text: s, st: st, x: out.w, w: w})
		out.w += w
		i = j
	}
	return out, rtl
}

// refont sets the characters of l that its frags' faces lack in
// fallback fonts, for lines laid out without tokenize (code).
func (m *metrics) refont(l line) line {
	var out line
	for _, f := range l.frags {
		for _, it := range m.splitFonts(f.text, f.st) {
			out.frags = append(out.frags, frag{text: it.text, st: it.st, x: out.w, w: it.w})
			out.w += it.w
		}
	}
	return out
}
