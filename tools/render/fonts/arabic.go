package fonts

import "unicode"

// ShapeArabic returns s with Arabic letters replaced by their contextual
// forms (isolated, initial, medial, final) and lam-alef ligatures, the
// Unicode presentation forms that Arabic fonts map. It is how text is
// shaped for drawing by character: PDFs here address glyphs by
// character, and the raster painters draw by character too. Text
// without Arabic letters is returned as it is. Characters stay in
// logical order; Reorder puts them in display order afterwards.
func ShapeArabic(s string) string {
	if !hasArabic(s) {
		return s
	}
	rs := []rune(s)
	out := make([]rune, 0, len(rs))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		f, ok := arabicForms[r]
		if !ok {
			out = append(out, r)
			continue
		}
		prev := joinsLeft(rs, i)
		next := -1
		for j := i + 1; j < len(rs); j++ {
			if !isTransparent(rs[j]) {
				next = j
				break
			}
		}
		if r == 0x0644 && next >= 0 {
			if lig, ok := lamAlef[rs[next]]; ok {
				if prev {
					out = append(out, lig+1)
				} else {
					out = append(out, lig)
				}
				// Marks between lam and alef are kept after the ligature.
				out = append(out, rs[i+1:next]...)
				i = next
				continue
			}
		}
		nextJoins := false
		if f.dual && next >= 0 {
			_, ok := arabicForms[rs[next]]
			nextJoins = ok && rs[next] != 0x0621 || rs[next] == tatweel
		}
		switch {
		case f.dual && prev && nextJoins:
			out = append(out, f.iso+3)
		case f.dual && nextJoins:
			out = append(out, f.iso+2)
		case prev:
			out = append(out, f.iso+1)
		default:
			out = append(out, f.iso)
		}
	}
	return string(out)
}

const tatweel = 0x0640

// joinsLeft reports whether the letter before rs[i], marks skipped,
// joins towards it.
func joinsLeft(rs []rune, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if isTransparent(rs[j]) {
			continue
		}
		if rs[j] == tatweel {
			return true
		}
		f, ok := arabicForms[rs[j]]
		return ok && f.dual
	}
	return false
}

func isTransparent(r rune) bool {
	return r >= 0x064B && r <= 0x065F || r == 0x0670 || unicode.Is(unicode.Mn, r) && r >= 0x0600 && r <= 0x06FF
}

func hasArabic(s string) bool {
	for _, r := range s {
		if r >= 0x0620 && r <= 0x06FF {
			return true
		}
	}
	return false
}

// arabicForm is a letter's isolated presentation form; its final form is
// the next code point, and for letters that join on both sides the
// initial and medial forms follow.
type arabicForm struct {
	iso  rune
	dual bool
}

var arabicForms = map[rune]arabicForm{
	0x0621: {0xFE80, false}, // hamza joins neither side; its "final" is never used
	0x0622: {0xFE81, false},
	0x0623: {0xFE83, false},
	0x0624: {0xFE85, false},
	0x0625: {0xFE87, false},
	0x0626: {0xFE89, true},
	0x0627: {0xFE8D, false},
	0x0628: {0xFE8F, true},
	0x0629: {0xFE93, false},
	0x062A: {0xFE95, true},
	0x062B: {0xFE99, true},
	0x062C: {0xFE9D, true},
	0x062D: {0xFEA1, true},
	0x062E: {0xFEA5, true},
	0x062F: {0xFEA9, false},
	0x0630: {0xFEAB, false},
	0x0631: {0xFEAD, false},
	0x0632: {0xFEAF, false},
	0x0633: {0xFEB1, true},
	0x0634: {0xFEB5, true},
	0x0635: {0xFEB9, true},
	0x0636: {0xFEBD, true},
	0x0637: {0xFEC1, true},
	0x0638: {0xFEC5, true},
	0x0639: {0xFEC9, true},
	0x063A: {0xFECD, true},
	0x0641: {0xFED1, true},
	0x0642: {0xFED5, true},
	0x0643: {0xFED9, true},
	0x0644: {0xFEDD, true},
	0x0645: {0xFEE1, true},
	0x0646: {0xFEE5, true},
	0x0647: {0xFEE9, true},
	0x0648: {0xFEED, false},
	0x0649: {0xFEEF, false},
	0x064A: {0xFEF1, true},
	// Persian and Urdu letters, from Presentation Forms-A.
	0x067E: {0xFB56, true},  // peh
	0x0686: {0xFB7A, true},  // tcheh
	0x0698: {0xFB8A, false}, // jeh
	0x06A9: {0xFB8E, true},  // keheh
	0x06AF: {0xFB92, true},  // gaf
	0x06CC: {0xFBFC, true},  // farsi yeh
}

// lamAlef maps the alef that follows a lam to the isolated form of their
// ligature; the final form is the next code point.
var lamAlef = map[rune]rune{
	0x0622: 0xFEF5,
	0x0623: 0xFEF7,
	0x0625: 0xFEF9,
	0x0627: 0xFEFB,
}
