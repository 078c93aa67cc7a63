package pdf

import (
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/text/unicode/norm"

	"github.com/switchyardhq/switchyard/tools/render/fonts"
)

// face is one of the font faces documents are set in.
type face uint8

const (
	regular face = iota
	bold
	italic
	boldItalic
	mono
	faceCount
)

// family and style are the names fpdf knows a face by.
func (f face) family() string {
	if f == mono {
		return "GoMono"
	}
	return "Go"
}

func (f face) style() string {
	switch f {
	case bold:
		return "B"
	case italic:
		return "I"
	case boldItalic:
		return "BI"
	}
	return ""
}

// source is the compiled-in face f is set in.
func (f face) source() fonts.Face {
	switch f {
	case bold:
		return fonts.GoBold
	case italic:
		return fonts.GoItalic
	case boldItalic:
		return fonts.GoBoldItalic
	case mono:
		return fonts.GoMono
	}
	return fonts.GoRegular
}

// faceFiles holds each face's font file as documents embed it: the Go
// faces with their hyphen drawn as a text hyphen rather than an en dash
// (fonts.WithTextHyphen). Go Mono keeps its own, as code does.
var faceFiles = sync.OnceValue(func() (out [faceCount][]byte) {
	for fc := range faceCount {
		b := fc.source().TTF()
		if fc != mono {
			if p, err := fonts.WithTextHyphen(b); err == nil {
				b = p
			}
		}
		out[fc] = b
	}
	return out
})

// ttf is the font file fc is embedded from, shared: fpdf gets a copy.
func (f face) ttf() []byte { return faceFiles()[f] }

// withBold and withItalic combine emphasis; mono stays mono because the
// Go Mono faces other than regular are not embedded in documents.
func (f face) withBold() face {
	switch f {
	case regular:
		return bold
	case italic:
		return boldItalic
	}
	return f
}

func (f face) withItalic() face {
	switch f {
	case regular:
		return italic
	case bold:
		return boldItalic
	}
	return f
}

// metrics holds the advance widths of every face, in thousandths of the
// font size, computed the way fpdf computes them so that lines measured
// here are the lines fpdf draws. A width of zero means the face has no
// glyph for the rune. Only the Basic Multilingual Plane is covered: fpdf's
// UTF-8 fonts address nothing beyond it, and the Go fonts have nothing
// there.
type metrics struct {
	widths [faceCount][]uint16
	// covered is set for runes every face draws, so that switching to
	// bold never turns a drawable character into a missing one.
	covered []bool
}

var (
	loadMetrics = sync.OnceValue(buildMetrics)
)

func buildMetrics() *metrics {
	m := &metrics{covered: make([]bool, 0x10000)}
	for i := range m.covered {
		m.covered[i] = true
	}
	var buf sfnt.Buffer
	for fc := range faceCount {
		fnt, err := sfnt.Parse(fc.ttf())
		if err != nil {
			panic("pdf: " + err.Error())
		}
		upem := fnt.UnitsPerEm()
		scale := 1000 / float64(upem)
		w := make([]uint16, 0x10000)
		for r := rune(0x20); r < 0x10000; r++ {
			g, err := fnt.GlyphIndex(&buf, r)
			if err != nil || g == 0 {
				m.covered[r] = false
				continue
			}
			adv, err := fnt.GlyphAdvance(&buf, g, fixed.Int26_6(upem)<<6, 0)
			if err != nil {
				m.covered[r] = false
				continue
			}
			v := int(math.Round(scale * float64(adv) / 64))
			if v <= 0 {
				// fpdf treats zero-width glyphs (combining marks)
				// as width 0 too; keep 1 as the "has a glyph" mark.
				v = 1
			}
			w[r] = uint16(min(v, math.MaxUint16))
		}
		m.widths[fc] = w
	}
	for r := range 0x20 {
		m.covered[r] = false
	}
	return m
}

// width returns the width of s set in fc at size points.
func (m *metrics) width(fc face, size float64, s string) float64 {
	t := m.widths[fc]
	sum := 0
	for _, r := range s {
		if r < 0x10000 && t[r] > 1 {
			sum += int(t[r])
		}
	}
	return float64(sum) * size / 1000
}

func (m *metrics) runeWidth(fc face, size float64, r rune) float64 {
	if r >= 0x10000 || m.widths[fc][r] <= 1 {
		return 0
	}
	return float64(m.widths[fc][r]) * size / 1000
}

// replacement stands for a run of characters the fonts cannot draw.
const replacement = '\uFFFD'

// lookalikes are characters the fonts lack with a close drawable stand-in.
var lookalikes = map[rune]rune{
	'\u2023': '\u2022', // triangular bullet
	'\u2043': '\u2013', // hyphen bullet
	'\u2212': '-',      // minus sign, when missing
	'\u2713': '\u221A', // check mark
	'\u2714': '\u221A',
	'\u2717': '\u00D7', // ballot x
	'\u2718': '\u00D7',
	'\u2715': '\u00D7',
	'\u2605': '*', // stars
	'\u2606': '*',
	'\u25B6': '\u25BA', // play triangle
	'\u27A1': '\u2192', // arrows drawn as emoji
	'\u2B05': '\u2190',
}

// clean returns s with every character the fonts cannot draw dealt with:
// layout characters (zero-width spaces, direction marks, variation
// selectors), skin tones and emoji no font has are dropped, unusual spaces become spaces, and each
// run of other undrawable characters becomes one U+FFFD. Control
// characters are dropped except newline, which is kept when keepNewlines
// is set (code blocks).
func (m *metrics) clean(s string, keepNewlines bool) string {
	if isPlain(s) {
		return s
	}
	s = fonts.ShapeArabic(norm.NFC.String(s))
	b := make([]byte, 0, len(s))
	lastReplaced, dropped := false, false
	for _, r := range s {
		// An emoji dropped between a space and a space or punctuation
		// would leave "well , done": take the space before it back.
		if dropped && !isEmoji(r) && !isInvisible(r) {
			if (r == ' ' || unicode.IsPunct(r)) && len(b) > 0 && b[len(b)-1] == ' ' {
				b = b[:len(b)-1]
			}
			dropped = false
		}
		switch {
		case r == '\n' && keepNewlines:
			b = append(b, '\n')
			lastReplaced = false
			continue
		case r == '\t':
			b = append(b, ' ')
			lastReplaced = false
			continue
		case r < 0x10000 && m.covered[r]:
			b = utf8.AppendRune(b, r)
			lastReplaced = false
			continue
		case (r == zwj || r == zwnj) && len(b) > 0 && fonts.NeedsShaping(lastRune(b)):
			// Joiners choose between a conjunct, a half form and a
			// visible virama; the shaper reads them.
			b = utf8.AppendRune(b, r)
			continue
		case unicode.IsControl(r) || isInvisible(r):
			continue
		case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			b = append(b, ' ')
			lastReplaced = false
			continue
		case r == 0x20E3:
			continue // the keycap mark: drawn alone it is a box
		case r >= 0x1F3FB && r <= 0x1F3FF:
			continue // a skin tone: emoji are drawn in black and white
		case m.drawable(r):
			b = utf8.AppendRune(b, r)
			lastReplaced = false
			continue
		}
		if alt, ok := lookalikes[r]; ok && m.drawable(alt) {
			b = utf8.AppendRune(b, alt)
			lastReplaced = false
			continue
		}
		if isEmoji(r) {
			dropped = true
			continue
		}
		if unicode.Is(unicode.Mn, r) && lastReplaced {
			continue // a mark on a character already replaced
		}
		if !lastReplaced {
			b = utf8.AppendRune(b, replacement)
			lastReplaced = true
		}
	}
	return string(b)
}

// The zero-width joiner and non-joiner.
const (
	zwj  = '\u200D'
	zwnj = '\u200C'
)

func lastRune(b []byte) string {
	_, n := utf8.DecodeLastRune(b)
	return string(b[len(b)-n:])
}

// isPlain reports whether s is printable ASCII, which every face draws,
// so that the common case skips normalisation.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// isInvisible reports format characters that only steer layout: zero-width
// spaces and joiners, direction marks and embeddings, variation selectors,
// the byte order mark, and the tag characters of flag emoji.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F,
		r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F,
		r >= 0xFE00 && r <= 0xFE0F,
		r == 0xFEFF,
		r >= 0xE0000 && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// isEmoji reports pictographs and emoji parts (regional indicators, skin
// tones, the keycap mark), which are dropped rather than replaced: they
// decorate text more than they carry it.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, // emoji, pictographs, flags, tones
		r >= 0x2600 && r <= 0x27BF, // miscellaneous symbols, dingbats
		r >= 0x2300 && r <= 0x23FF, // watch, hourglass, media keys
		r >= 0x2B00 && r <= 0x2BFF, // stars, squares, arrows
		r >= 0x1FB00 && r <= 0x1FBFF,
		r == 0x20E3, // combining keycap
		r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299,
		r == 0x00A9, r == 0x00AE, r == 0x2122, // only when missing
		r == 0x2139, r == 0x24C2:
		return true
	}
	return false
}

// metaText prepares s for the PDF's metadata and outline, which viewers
// show in their own fonts, so every language stays: only control and
// layout characters and characters beyond the Basic Multilingual Plane
// (emoji, which fpdf cannot encode there) are dropped, and s is cut at
// maxMetaRunes.
func metaText(s string) string {
	const maxMetaRunes = 500
	s = norm.NFC.String(strings.ToValidUTF8(s, ""))
	b := make([]rune, 0, min(len(s), maxMetaRunes))
	space := false
	for _, r := range s {
		if len(b) == maxMetaRunes {
			break
		}
		switch {
		case unicode.IsSpace(r):
			if !space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = true
			continue
		case r > 0xFFFF, unicode.IsControl(r), isInvisible(r):
			continue
		}
		b = append(b, r)
		space = false
	}
	return strings.TrimSpace(string(b))
}
