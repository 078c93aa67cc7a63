package extract

import (
	"context"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on a font's encoding data, which the parser's decoder scans
// linearly for every character code.
const (
	maxCMapBytes   = 2 << 20
	maxCMapEntries = 1 << 16
	maxDifferences = 1024
	decodeChunk    = 4096 // raw bytes decoded between context checks
	defaultAdvance = 0.5  // glyph width, in ems, when the font gives none
	spaceGapEms    = 0.2  // a horizontal gap this wide separates words
	lineShiftEms   = 0.5  // a vertical move this large starts a line
)

// font is what the page reader needs of a font: how to decode its codes
// and how wide its glyphs are.
type font struct {
	enc     pdf.TextEncoding
	first   int       // code of widths[0]
	widths  []float64 // in thousandths of an em; nil: defaultAdvance
	twoByte bool      // codes are two bytes (Type0 fonts)
}

// fontEncoding returns the decoder the parser makes for font dictionary
// v, once its encoding data passes the checks that keep the decoder
// bounded; otherwise, or if the parser panics, Latin-1. scratch is a
// dictionary the checks may change, a second copy of v's. A ToUnicode
// CMap is charged to budget, the bytes the document may still inflate.
func fontEncoding(ctx context.Context, v, scratch pdf.Value, budget *int64) (f font) {
	f = font{enc: latin1{}, twoByte: v.Key("Subtype").Name() == "Type0"}
	defer func() {
		if recover() != nil {
			f.enc = latin1{}
		}
	}()
	if !f.twoByte {
		if w := v.Key("Widths"); w.Kind() == pdf.Array && w.Len() <= 256 {
			f.first = int(v.Key("FirstChar").Int64())
			for i := range w.Len() {
				if ctx.Err() != nil {
					return f
				}
				f.widths = append(f.widths, w.Index(i).Float64())
			}
		}
	}
	enc := v.Key("Encoding")
	switch enc.Kind() {
	case pdf.Dict:
		// The parser's decoder looks up every element of /Differences
		// for every character; an element given by reference would be
		// read from the file each time.
		if d := enc.Key("Differences"); d.Len() > maxDifferences || hasReference(d) {
			return f
		}
	case pdf.Name:
		if enc.Name() != "Identity-H" {
			break
		}
		fallthrough
	case pdf.Null:
		if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream && !cmapBounded(tu, scratch, budget) {
			return f
		}
	}
	pf := pdf.Font{V: v}
	f.enc = pf.Encoder()
	return f
}

// cmapBounded reports whether a ToUnicode CMap is small and declares no
// more mappings than maxCMapEntries: the parser appends as many entries
// as a block's count says, at every end of a block. It replays the
// parser's stack effects, which need a dictionary to push where the
// parser makes a new one; scratch is one that nothing else uses.
func cmapBounded(tu, scratch pdf.Value, budget *int64) bool {
	var tail hexTail
	n, err := inflatedSize(tu, min(maxCMapBytes, *budget), &tail)
	// Measured here, replayed below, decoded by the parser: three times.
	*budget -= 3 * n
	if err != nil || tail.open || *budget < 0 {
		return false
	}
	entries := 0
	pop := func(stk *pdf.Stack, n int) {
		for range n {
			stk.Pop()
		}
	}
	err = guard(func() error {
		n := -1
		pdf.Interpret(tu, func(stk *pdf.Stack, op string) {
			switch op {
			case "findresource":
				pop(stk, 2)
				stk.Push(scratch)
			case "begincmap":
				stk.Push(scratch)
			case "endcmap":
				stk.Pop()
			case "defineresource":
				stk.Pop()
				v := stk.Pop()
				stk.Pop()
				stk.Push(v)
			case "begincodespacerange", "beginbfchar", "beginbfrange":
				n = int(stk.Pop().Int64())
				if n < 0 || n > maxCMapEntries {
					panic(pdfStop{ErrLimit})
				}
			case "endcodespacerange", "endbfchar", "endbfrange":
				per := 2
				if op == "endbfrange" {
					per = 3
				}
				entries += max(n, 0)
				if entries > maxCMapEntries {
					panic(pdfStop{ErrLimit})
				}
				pop(stk, max(n, 0)*per)
				if op == "endcodespacerange" {
					n = -1
				}
			}
		})
		return nil
	})
	return err == nil
}

// hasReference reports whether an array holds indirect references. The
// parser resolves elements only when asked for them; its text form
// shows references as "n g R".
func hasReference(a pdf.Value) bool {
	for _, tok := range strings.FieldsFunc(a.String(), func(r rune) bool { return r == ' ' || r == '[' || r == ']' }) {
		if tok == "R" {
			return true
		}
	}
	return false
}

// latin1 decodes one byte per character, for fonts whose encoding is
// unknown or refused.
type latin1 struct{}

func (latin1) Decode(raw string) string {
	r := make([]rune, len(raw))
	for i := range len(raw) {
		r[i] = rune(raw[i])
	}
	return string(r)
}

// matrix is a PDF transformation matrix [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// translate returns the matrix moved by (tx, ty) in its own space.
func (m matrix) translate(tx, ty float64) matrix {
	m[4] += tx*m[0] + ty*m[2]
	m[5] += tx*m[1] + ty*m[3]
	return m
}

// pageReader interprets a page's content stream with the parser's
// tokenizer, keeping the text state that decides where words and lines
// break. Positions are in text space scaled by the text matrix; the
// graphics state's own transformation is left out, as it rarely
// separates words.
type pageReader struct {
	ctx   context.Context
	fonts map[string]font
	limit int // bytes of text after which the page is cut
	b     strings.Builder
	cut   bool // the page's text was cut at limit

	ops      int
	args     []pdf.Value
	font     font
	size     float64 // font size
	leading  float64
	tm, tlm  matrix // text matrix and text line matrix
	lastX    float64
	lastY    float64
	haveLast bool
}

func (pr *pageReader) interpret(contents pdf.Value) error {
	pr.font = font{enc: latin1{}}
	pr.size = 1
	pdf.Interpret(contents, pr.op)
	return nil
}

func (pr *pageReader) op(stk *pdf.Stack, op string) {
	pr.args = pr.args[:0]
	for stk.Len() > 0 {
		pr.args = append(pr.args, stk.Pop())
	}
	// Popped last first.
	for i, j := 0, len(pr.args)-1; i < j; i, j = i+1, j-1 {
		pr.args[i], pr.args[j] = pr.args[j], pr.args[i]
	}
	if pr.ops++; pr.ops%256 == 0 {
		if err := pr.ctx.Err(); err != nil {
			panic(pdfStop{err})
		}
	}
	a := pr.args
	num := func(i int) float64 { return a[i].Float64() }
	switch {
	case op == "BT":
		pr.tm, pr.tlm = identity, identity
	case op == "Tf" && len(a) == 2:
		if f, ok := pr.fonts[a[0].Name()]; ok {
			pr.font = f
		} else {
			pr.font = font{enc: latin1{}}
		}
		pr.size = math.Abs(num(1))
	case op == "TL" && len(a) == 1:
		pr.leading = num(0)
	case op == "Td" && len(a) == 2:
		pr.moveLine(num(0), num(1))
	case op == "TD" && len(a) == 2:
		pr.leading = -num(1)
		pr.moveLine(num(0), num(1))
	case op == "Tm" && len(a) == 6:
		pr.tm = matrix{num(0), num(1), num(2), num(3), num(4), num(5)}
		pr.tlm = pr.tm
	case op == "T*":
		pr.moveLine(0, -pr.leading)
	case op == "Tj" && len(a) == 1:
		pr.show(a[0].RawString())
	case op == "'" && len(a) == 1:
		pr.moveLine(0, -pr.leading)
		pr.show(a[0].RawString())
	case op == `"` && len(a) == 3:
		pr.moveLine(0, -pr.leading)
		pr.show(a[2].RawString())
	case op == "TJ" && len(a) == 1:
		arr := a[0]
		for i := range arr.Len() {
			switch x := arr.Index(i); x.Kind() {
			case pdf.String:
				pr.show(x.RawString())
			case pdf.Integer, pdf.Real:
				pr.tm = pr.tm.translate(-x.Float64()/1000*pr.em(), 0)
			}
		}
	}
	if pr.b.Len() > pr.limit {
		pr.cut = true
		panic(pdfStop{nil})
	}
}

func (pr *pageReader) moveLine(tx, ty float64) {
	pr.tlm = pr.tlm.translate(tx, ty)
	pr.tm = pr.tlm
}

// em is the font size in text space, at least a tiny positive amount so
// that gaps stay measurable.
func (pr *pageReader) em() float64 { return max(pr.size, 1e-3) }

// show writes a string of character codes, preceded by a space or a line
// break when its position says a word or line ends before it, and
// advances the text matrix past it.
func (pr *pageReader) show(raw string) {
	x, y := pr.tm[4], pr.tm[5]
	scaleX := math.Hypot(pr.tm[0], pr.tm[1])
	scaleY := math.Hypot(pr.tm[2], pr.tm[3])
	em := pr.em()
	if pr.haveLast {
		switch {
		case math.Abs(y-pr.lastY) > lineShiftEms*em*scaleY:
			pr.sep('\n')
		case x-pr.lastX > spaceGapEms*em*scaleX || x < pr.lastX-em*scaleX:
			pr.sep(' ')
		}
	}
	adv := pr.font.advance(raw)
	if room := 4*(pr.limit-pr.b.Len()) + 16; len(raw) > room {
		raw = raw[:max(room, 0)]
		pr.cut = true
	}
	for len(raw) > 0 {
		n := min(len(raw), decodeChunk)
		pr.b.WriteString(pr.font.enc.Decode(raw[:n]))
		raw = raw[n:]
		if len(raw) > 0 {
			if err := pr.ctx.Err(); err != nil {
				panic(pdfStop{err})
			}
		}
	}
	pr.tm = pr.tm.translate(adv*em, 0)
	pr.lastX, pr.lastY, pr.haveLast = pr.tm[4], pr.tm[5], true
}

// advance is the width of a string of codes in ems.
func (f font) advance(raw string) float64 {
	if f.twoByte {
		return float64(len(raw)/2) * defaultAdvance
	}
	w := 0.0
	for i := range len(raw) {
		if c := int(raw[i]) - f.first; c >= 0 && c < len(f.widths) && f.widths[c] > 0 {
			w += f.widths[c] / 1000
		} else {
			w += defaultAdvance
		}
	}
	return w
}

// sep writes a word or line separator unless the text already ends in
// one.
func (pr *pageReader) sep(c byte) {
	s := pr.b.String()
	if s == "" {
		return
	}
	switch last := s[len(s)-1]; {
	case last == '\n':
	case last == ' ' && c == ' ':
	default:
		pr.b.WriteByte(c)
	}
}
