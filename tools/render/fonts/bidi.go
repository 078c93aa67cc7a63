package fonts

import (
	"slices"
	"unicode"

	"golang.org/x/text/unicode/bidi"
)

// HasRTL reports whether s has a right-to-left letter (Hebrew, Arabic,
// Syriac, Thaana, N'Ko and their presentation forms), the only text
// Reorder changes.
func HasRTL(s string) bool {
	for _, r := range s {
		if isRTL(r) {
			return true
		}
	}
	return false
}

func isRTL(r rune) bool {
	return r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF
}

// BaseRTL reports whether a paragraph that starts like s reads from
// right to left: its first strong letter is right-to-left.
func BaseRTL(s string) bool {
	for _, r := range s {
		if isRTL(r) {
			return true
		}
		if unicode.IsLetter(r) {
			return false
		}
	}
	return false
}

// Reorder returns the runes of one line of s in display order, left to
// right, by the Unicode bidirectional algorithm, with the paragraph
// direction given by rtl; order[i] is the index, among the runes of s,
// of the rune shown at position i, so that a caller can carry per-rune
// styles along. Brackets in right-to-left runs are mirrored, and a
// combining mark stays after the letter it sits on. Text without
// right-to-left letters comes back in its own order.
func Reorder(s string, rtl bool) (runes []rune, order []int) {
	runes = []rune(s)
	order = make([]int, len(runes))
	for i := range order {
		order[i] = i
	}
	if !HasRTL(s) && !rtl {
		return runes, order
	}
	dir := bidi.LeftToRight
	if rtl {
		dir = bidi.RightToLeft
	}
	var p bidi.Paragraph
	if _, err := p.SetString(s, bidi.DefaultDirection(dir)); err != nil {
		return runes, order
	}
	o, err := p.Order()
	if err != nil {
		return runes, order
	}
	// The runs come in logical order, with rune positions (end
	// inclusive) and a direction; their embedding levels follow from
	// the paragraph direction, as no explicit embeddings are kept.
	level := make([]int, len(runes))
	for i := range o.NumRuns() {
		run := o.Run(i)
		start, end := run.Pos()
		lv := 0
		switch {
		case run.Direction() == bidi.RightToLeft:
			lv = 1
		case rtl:
			lv = 2
		}
		for k := max(start, 0); k <= end && k < len(runes); k++ {
			level[k] = lv
		}
	}
	// A cluster is a letter and the marks on it; clusters move as one.
	type cluster struct{ from, to, level int }
	var cs []cluster
	for k := 0; k < len(runes); {
		j := k + 1
		for j < len(runes) && unicode.In(runes[j], unicode.Mn, unicode.Me) {
			j++
		}
		cs = append(cs, cluster{k, j, level[k]})
		k = j
	}
	// Rule L2: from the highest level down to the lowest odd one,
	// reverse every stretch at that level or higher.
	top, lowOdd := 0, 99
	for _, c := range cs {
		top = max(top, c.level)
		if c.level%2 == 1 {
			lowOdd = min(lowOdd, c.level)
		}
	}
	for lv := top; lv >= lowOdd && lv > 0; lv-- {
		for i := 0; i < len(cs); {
			if cs[i].level < lv {
				i++
				continue
			}
			j := i
			for j < len(cs) && cs[j].level >= lv {
				j++
			}
			slices.Reverse(cs[i:j])
			i = j
		}
	}
	outR := make([]rune, 0, len(runes))
	outO := make([]int, 0, len(runes))
	for _, c := range cs {
		for k := c.from; k < c.to; k++ {
			r := runes[k]
			if m, ok := mirror[r]; ok && c.level%2 == 1 {
				r = m
			}
			outR = append(outR, r)
			outO = append(outO, k)
		}
	}
	return outR, outO
}

var mirror = map[rune]rune{
	'(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{',
	'<': '>', '>': '<', '«': '»', '»': '«', '‹': '›', '›': '‹',
}
