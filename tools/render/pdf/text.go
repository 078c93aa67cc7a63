package pdf

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// rgb is a colour.
type rgb struct{ r, g, b int }

// style is how a stretch of inline text is set.
type style struct {
	face   face
	fb     uint8   // the fallback font that sets this text, 0 for face
	size   float64 // points
	color  rgb
	strike bool
	code   bool   // inline code: drawn on a light panel
	link   string // clickable destination, if any
}

// span is inline text in one style. A "\n" in text is a forced line break.
type span struct {
	text string
	st   style
}

// frag is part of a laid-out line in one style, spaces included, so that
// each is one text operation and text extraction keeps its spaces.
type frag struct {
	text string
	st   style
	x, w float64 // offset from the line's start, width
}

// line is one laid-out line of text.
type line struct {
	frags []frag
	w     float64
}

// item is a word piece or a space while lines are broken.
type item struct {
	text  string
	st    style
	w     float64
	space bool
	brk   bool // forced line break
}

// breakLines lays spans out in lines no wider than width, breaking at
// spaces, and inside words only when a word alone is wider than a line
// (long URLs, identifiers), preferring a break after a slash, hyphen or
// similar. Leading and trailing spaces of a line are dropped.
func (m *metrics) breakLines(spans []span, width float64) []line {
	items := m.tokenize(spans)
	var (
		lines []line
		cur   []item
		curW  float64
	)
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1].space {
			curW -= cur[len(cur)-1].w
			cur = cur[:len(cur)-1]
		}
		lines = append(lines, merge(cur))
		cur, curW = nil, 0
	}
	for i := 0; i < len(items); {
		it := items[i]
		if it.brk {
			flush()
			i++
			continue
		}
		if it.space {
			if len(cur) > 0 {
				cur = append(cur, it)
				curW += it.w
			}
			i++
			continue
		}
		// A word: the items up to the next space or break.
		j, wordW := i, 0.0
		for j < len(items) && !items[j].space && !items[j].brk {
			wordW += items[j].w
			j++
		}
		switch {
		case curW+wordW <= width+0.01:
			cur = append(cur, items[i:j]...)
			curW += wordW
		case wordW <= width+0.01:
			flush()
			cur = append(cur, items[i:j]...)
			curW = wordW
		default:
			// Too wide for any line: fill the current line, then
			// continue on the next ones.
			for _, piece := range items[i:j] {
				rest := piece
				for rest.text != "" {
					head, tail := m.hyphenateToFit(rest, width-curW, curW == 0)
					if head.text != "" {
						cur = append(cur, head)
						curW += head.w
					}
					if tail.text == "" {
						break
					}
					flush()
					rest = tail
				}
			}
		}
		i = j
	}
	if len(cur) > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// splitToFit cuts it so that the head is at most avail wide. When force is
// set (an empty line) the head takes at least one character, so that the
// layout always advances. A cut never separates a mark from its letter
// or a conjunct's consonants (clusterBreak), and a run drawn shaped is
// measured shaped.
func (m *metrics) splitToFit(it item, avail float64, force bool) (head, tail item) {
	w, cut, soft := 0.0, 0, 0
	var cuts []int // the cluster boundaries that fit
	for i, r := range it.text {
		rw := m.styleRuneWidth(it.st, r)
		if w+rw > avail+0.01 {
			break
		}
		w += rw
		end := i + utf8.RuneLen(r)
		if !clusterBreak(it.text, end) {
			continue
		}
		cut = end
		if it.st.fb != 0 {
			cuts = append(cuts, cut)
		}
		if strings.ContainsRune("/-_.?&=,;:", r) {
			soft = cut
		}
	}
	if cut < len(it.text) && soft > cut/2 {
		cut = soft
	}
	// Character widths only estimate a shaped run: step back while the
	// shaped head is too wide. Only the head is looked at: the rest of a
	// long word can be a whole paragraph.
	shaped := it.st.fb != 0 && cut > 0 && m.outlined(it.st, it.text[:cut])
	for shaped && cut > 0 && m.styleWidth(it.st, it.text[:cut]) > avail+0.01 {
		for len(cuts) > 0 && cuts[len(cuts)-1] >= cut {
			cuts = cuts[:len(cuts)-1]
		}
		cut = 0
		if len(cuts) > 0 {
			cut = cuts[len(cuts)-1]
		}
	}
	if cut == 0 && force {
		for cut < len(it.text) {
			_, n := utf8.DecodeRuneInString(it.text[cut:])
			cut += n
			if clusterBreak(it.text, cut) {
				break
			}
		}
		shaped = it.st.fb != 0 && m.outlined(it.st, it.text[:cut])
	}
	head, tail = it, it
	head.text, tail.text = it.text[:cut], it.text[cut:]
	head.w = m.styleWidth(it.st, head.text)
	tail.w = max(0, it.w-head.w) // not measured again: tails can be long
	if shaped && len(tail.text) <= maxMeasuredTail {
		tail.w = m.styleWidth(it.st, tail.text)
	}
	return head, tail
}

// maxMeasuredTail is the longest tail of a shaped run measured again
// after a cut; a longer one keeps the difference, which is exact for
// text set character by character and close for shaped text.
const maxMeasuredTail = 1024

// clusterBreak reports whether s may be cut at byte i without taking a
// mark from its letter (a vowel sign, a Thai tone mark, an accent) or
// splitting a conjunct after its virama.
func clusterBreak(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(s[i:])
	if unicode.In(next, unicode.Mn, unicode.Mc, unicode.Me) || next == '\u200D' || next == '\u200C' {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	return prev != '\u200D' && norm.NFC.PropertiesString(string(prev)).CCC() != 9 // virama
}

// hyphenateToFit is splitToFit for running text: a word cut between two
// letters of an alphabet (Latin, Greek, Cyrillic) gets a hyphen at the
// end of the head, so that "Switzerland" cut in a narrow column reads
// "Switzer-" / "land". Scripts written without hyphens (CJK, Thai) and
// cuts at a slash or similar are left as splitToFit makes them.
func (m *metrics) hyphenateToFit(it item, avail float64, force bool) (head, tail item) {
	head, tail = m.splitToFit(it, avail, force)
	if head.text == "" || tail.text == "" {
		return head, tail
	}
	hy := m.styleWidth(it.st, "-")
	if hy == 0 {
		return head, tail
	}
	for head.text != "" {
		last, n := utf8.DecodeLastRuneInString(head.text)
		next, _ := utf8.DecodeRuneInString(it.text[len(head.text):])
		if !alphabetic(last) || !alphabetic(next) {
			return head, tail
		}
		if head.w+hy <= avail+0.01 && utf8.RuneCountInString(head.text) >= 2 {
			tail.text = it.text[len(head.text):]
			tail.w = max(0, it.w-head.w)
			head.text += "-"
			head.w += hy
			return head, tail
		}
		// Make room for the hyphen: one letter moves to the next line.
		head.text = head.text[:len(head.text)-n]
		head.w = m.styleWidth(it.st, head.text)
		if utf8.RuneCountInString(head.text) < 2 {
			return m.splitToFit(it, avail, force)
		}
	}
	return head, tail
}

func alphabetic(r rune) bool {
	return unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic)
}

// tokenize splits spans into words and spaces, collapsing runs of spaces.
func (m *metrics) tokenize(spans []span) []item {
	var items []item
	lastSpace := true
	for _, sp := range spans {
		text := sp.text
		for text != "" {
			if text[0] == '\n' {
				items = append(items, item{brk: true})
				text = text[1:]
				lastSpace = true
				continue
			}
			if text[0] == ' ' {
				n := 1
				for n < len(text) && text[n] == ' ' {
					n++
				}
				if !lastSpace {
					items = append(items, item{text: " ", st: sp.st, w: m.width(sp.st.face, sp.st.size, " "), space: true})
				}
				lastSpace = true
				text = text[n:]
				continue
			}
			n := strings.IndexAny(text, " \n")
			if n < 0 {
				n = len(text)
			}
			word := text[:n]
			items = append(items, m.splitFonts(word, sp.st)...)
			lastSpace = false
			text = text[n:]
		}
	}
	return items
}

// merge joins neighbouring items of one style into frags.
func merge(items []item) line {
	var l line
	for i := 0; i < len(items); {
		j, w := i, 0.0
		for j < len(items) && items[j].st == items[i].st {
			w += items[j].w
			j++
		}
		text := items[i].text
		if j > i+1 {
			var b strings.Builder
			for _, it := range items[i:j] {
				b.WriteString(it.text)
			}
			text = b.String()
		}
		l.frags = append(l.frags, frag{text: text, st: items[i].st, x: l.w, w: w})
		l.w += w
		i = j
	}
	return l
}
