package docx

// Emoji are kept as text and set in an emoji font, as Word itself writes
// them: a run of their own whose rFonts names the emoji font in all four
// script slots, so that whichever slot Word or LibreOffice picks for a
// character (an emoji beyond the Basic Multilingual Plane, a symbol Word
// counts as East Asian, an emoji in a right-to-left paragraph, which takes
// the complex-script slot) the emoji font is the one asked for. Segoe UI
// Emoji is in every Windows since 8, and Word for Mac maps it to Apple
// Color Emoji. A reader without it falls back per character:
// LibreOffice on Linux takes the font fontconfig offers for the emoji
// (Noto Color Emoji from fonts-noto-color-emoji, else Symbola from
// fonts-symbola, in black and white).
const (
	emojiFont      = "Segoe UI Emoji"
	emojiFontsRPr  = `<w:rFonts w:ascii="` + emojiFont + `" w:hAnsi="` + emojiFont + `" w:eastAsia="` + emojiFont + `" w:cs="` + emojiFont + `"/>`
	zeroWidthJoin  = 0x200D
	emojiVariation = 0xFE0F
	combiningKeys  = 0x20E3
)

// textSegment is a part of a run's text: emoji (and the joiners, skin
// tones, variation selectors and tags that belong to them) or other text.
type textSegment struct {
	text  string
	emoji bool
}

// splitEmoji cuts s into segments of emoji sequences and other text. A
// sequence keeps every character that belongs to it, so that skin tones,
// families joined with U+200D, flags (pairs of regional indicators, or a
// black flag with tag characters) and keycaps reach the reader whole.
func splitEmoji(s string) []textSegment {
	if !hasEmoji(s) {
		return []textSegment{{text: s}}
	}
	var out []textSegment
	rs := []rune(s)
	start, inEmoji := 0, false
	emit := func(end int) {
		if end > start {
			out = append(out, textSegment{text: string(rs[start:end]), emoji: inEmoji})
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		e := startsEmoji(rs, i) || inEmoji && continuesEmoji(rs, i)
		if e != inEmoji {
			emit(i)
			inEmoji = e
		}
	}
	emit(len(rs))
	return out
}

// hasEmoji reports whether s holds anything splitEmoji would set apart.
func hasEmoji(s string) bool {
	rs := []rune(s)
	for i := range rs {
		if startsEmoji(rs, i) {
			return true
		}
	}
	return false
}

// startsEmoji reports whether rs[i] is an emoji in its own right: a
// pictograph, a regional indicator, a symbol whose default presentation
// is emoji, a symbol or keycap base followed by the emoji variation
// selector, or a keycap base followed by the keycap mark.
func startsEmoji(rs []rune, i int) bool {
	r := rs[i]
	if isEmoji(r) {
		return true
	}
	next := rune(0)
	if i+1 < len(rs) {
		next = rs[i+1]
	}
	switch {
	case next == emojiVariation && (r >= 0x2000 && r <= 0x3300 || r == 0xA9 || r == 0xAE || isKeycapBase(r)):
		return true
	case next == combiningKeys && isKeycapBase(r):
		return true
	}
	return false
}

// continuesEmoji reports whether rs[i] belongs to the emoji sequence
// before it: a joiner and the pictograph after it, a skin tone, a
// variation selector, the keycap mark or a tag character.
func continuesEmoji(rs []rune, i int) bool {
	r := rs[i]
	switch {
	case r == zeroWidthJoin:
		return i+1 < len(rs) && (isEmoji(rs[i+1]) || rs[i+1] >= 0x2000 && rs[i+1] <= 0x3300)
	case r == emojiVariation, r == combiningKeys,
		r >= 0xE0020 && r <= 0xE007F: // tags of a subdivision flag
		return true
	case i > 0 && rs[i-1] == zeroWidthJoin:
		return r >= 0x2000 && r <= 0x3300 // ♀ ♂ ⚕ ❤ after a joiner
	}
	return false
}

func isKeycapBase(r rune) bool { return r >= '0' && r <= '9' || r == '#' || r == '*' }

// isEmoji reports whether r is an emoji or a modifier of one: the
// pictographs, emoticons, regional indicators and skin tones beyond the
// Basic Multilingual Plane, and the few symbols below it that are emoji
// by default (Unicode's Emoji_Presentation). Symbols such as ★ ✓ ☃ are
// text by default and stay in the text font unless U+FE0F asks otherwise.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF:
		return true
	case r >= 0x231A && r <= 0x231B, r >= 0x23E9 && r <= 0x23EC, r == 0x23F0, r == 0x23F3,
		r >= 0x25FD && r <= 0x25FE, r >= 0x2614 && r <= 0x2615, r >= 0x2648 && r <= 0x2653,
		r == 0x267F, r == 0x2693, r == 0x26A1, r >= 0x26AA && r <= 0x26AB, r >= 0x26BD && r <= 0x26BE,
		r >= 0x26C4 && r <= 0x26C5, r == 0x26CE, r == 0x26D4, r == 0x26EA, r >= 0x26F2 && r <= 0x26F3,
		r == 0x26F5, r == 0x26FA, r == 0x26FD, r == 0x2705, r >= 0x270A && r <= 0x270B, r == 0x2728,
		r == 0x274C, r == 0x274E, r >= 0x2753 && r <= 0x2755, r == 0x2757, r >= 0x2795 && r <= 0x2797,
		r == 0x27B0, r == 0x27BF, r >= 0x2B1B && r <= 0x2B1C, r == 0x2B50, r == 0x2B55:
		return true
	}
	return false
}
